import { z } from 'zod';
import { defineCheck } from '../define-check.js';
import type { GuardrailEndpoint } from '../types.js';

type Obj = Record<string, unknown>;
const isObj = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);

interface Options {
  prefix: string;
  applyToRole: 'user' | 'system' | 'assistant';
  addToExisting: boolean;
  onlyIfEmpty: boolean;
}

/** The text of a content value (string, or the text parts of an array). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part): part is Obj => isObj(part) && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join('');
}

/** `content` with the prefix in front of its first text (a new text part when it has none). */
function prefixed(content: unknown, prefix: string, partType: string): unknown {
  if (typeof content === 'string') return prefix + content;
  if (!Array.isArray(content)) return prefix;
  const parts: unknown[] = content;
  const index = parts.findIndex((part) => isObj(part) && typeof part.text === 'string');
  if (index === -1) return [{ type: partType, text: prefix }, ...parts];
  return parts.map((part, i) =>
    i === index ? { ...(part as Obj), text: prefix + ((part as Obj).text as string) } : part,
  );
}

/** Adds the prefix in a messages array; returns false when onlyIfEmpty keeps it from acting. */
function intoMessages(messages: unknown[], o: Options, partType: string): boolean {
  const indexes = messages.flatMap((m, i) => (isObj(m) && m.role === o.applyToRole ? [i] : []));
  const target = o.applyToRole === 'system' ? indexes[0] : indexes[indexes.length - 1];
  const existing = target === undefined ? undefined : (messages[target] as Obj);
  if (o.onlyIfEmpty && existing && contentText(existing.content).trim() !== '') return false;
  if (existing && target !== undefined && o.addToExisting) {
    messages[target] = { ...existing, content: prefixed(existing.content, o.prefix, partType) };
    return true;
  }
  const message = { role: o.applyToRole, content: o.prefix };
  if (o.applyToRole === 'system') messages.unshift(message);
  else messages.splice(target ?? messages.length, 0, message);
  return true;
}

/** Adds the prefix to a top-level text field (Anthropic `system`, Responses `instructions`). */
function intoField(body: Obj, field: string, o: Options, partType: string): boolean {
  const existing = body[field];
  const present = existing !== undefined && existing !== null && contentText(existing) !== '';
  if (o.onlyIfEmpty && present) return false;
  body[field] =
    present && o.addToExisting
      ? prefixed(existing, o.prefix, partType)
      : o.prefix + (present ? `\n${contentText(existing)}` : '');
  return true;
}

function apply(endpoint: GuardrailEndpoint, body: Obj, o: Options): boolean {
  switch (endpoint) {
    case 'chatComplete':
      return Array.isArray(body.messages) && intoMessages(body.messages, o, 'text');
    case 'messages':
      if (o.applyToRole === 'system') return intoField(body, 'system', o, 'text');
      return Array.isArray(body.messages) && intoMessages(body.messages, o, 'text');
    case 'createModelResponse':
      if (o.applyToRole === 'system') return intoField(body, 'instructions', o, 'input_text');
      if (typeof body.input === 'string') {
        if (o.onlyIfEmpty && body.input.trim() !== '') return false;
        body.input = o.prefix + body.input;
        return true;
      }
      return Array.isArray(body.input) && intoMessages(body.input, o, 'input_text');
    case 'complete':
      if (typeof body.prompt === 'string') {
        if (o.onlyIfEmpty && body.prompt.trim() !== '') return false;
        body.prompt = o.prefix + body.prompt;
        return true;
      }
      if (Array.isArray(body.prompt) && body.prompt.every((p) => typeof p === 'string')) {
        body.prompt = body.prompt.map((p: string) => o.prefix + p);
        return true;
      }
      return false;
    default:
      return false;
  }
}

/**
 * Puts `prefix` in front of the user's input (or the system prompt, or the last assistant
 * turn, by `applyToRole`). With `addToExisting` the prefix joins the existing message (the
 * last one of that role; the first system message); otherwise, or when there is none, a new
 * message with the prefix goes before it. `onlyIfEmpty` acts only when that message is
 * missing or empty. Always passes: it changes the request, it does not judge it.
 */
export const addPrefix = defineCheck({
  id: 'default.addPrefix',
  hooks: ['beforeRequestHook'],
  parameters: z.strictObject({
    prefix: z.string().min(1).max(100_000),
    applyToRole: z.enum(['user', 'system', 'assistant']).default('user'),
    addToExisting: z.boolean().default(true),
    onlyIfEmpty: z.boolean().default(false),
  }),
  run(context, p) {
    if (!isObj(context.request.json))
      return { verdict: true, explanation: 'No JSON body to add a prefix to.', data: { added: false } };
    const body = structuredClone(context.request.json);
    const added = apply(context.endpoint, body, p);
    return added
      ? {
          verdict: true,
          explanation: `Prefix added (${p.applyToRole}).`,
          data: { added },
          transformed: { request: body },
        }
      : { verdict: true, explanation: 'Prefix not added.', data: { added } };
  },
});
