/**
 * Where the text of a request or an answer lives, per wire shape: OpenAI chat, completions,
 * embeddings, moderations, Responses, and Anthropic messages. Each piece of text is a slot
 * with its JSON path, so that a check can rewrite it in place (see write.ts).
 */
import type { GuardrailEndpoint } from '../types.js';

export type JsonPath = readonly (string | number)[];

export interface TextSlot {
  path: JsonPath;
  text: string;
  /** The message's role, where the shape has one. */
  role?: string;
  /** Index of the message (or choice) the slot belongs to; slots of one message share it. */
  group: number;
}

type Obj = Record<string, unknown>;
const isObj = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Text parts of a content array (`{type: 'text', text}` and the Responses API's input/output text). */
const TEXT_PART_TYPES = new Set(['text', 'input_text', 'output_text']);

/** A slot, with its role where the shape has one (no `role` key otherwise). */
function slot(path: JsonPath, text: string, group: number, role: string | undefined): TextSlot {
  return role === undefined ? { path, text, group } : { path, text, group, role };
}

// The readers below push into one array with plain loops: with `flatMap`, closures and spreads,
// a two-message chat request took ~2 µs to read, on every guarded request.

function contentSlots(
  out: TextSlot[],
  content: unknown,
  path: JsonPath,
  group: number,
  role: string | undefined,
): void {
  if (typeof content === 'string') {
    out.push(slot(path, content, group, role));
    return;
  }
  if (!Array.isArray(content)) return;
  for (let index = 0; index < content.length; index++) {
    const part: unknown = content[index];
    if (isObj(part) && typeof part.type === 'string' && TEXT_PART_TYPES.has(part.type) && typeof part.text === 'string')
      out.push(slot([...path, index, 'text'], part.text, group, role));
  }
}

function messageSlots(out: TextSlot[], messages: unknown, key: string, firstGroup: number): void {
  if (!Array.isArray(messages)) return;
  for (let index = 0; index < messages.length; index++) {
    const message: unknown = messages[index];
    if (!isObj(message)) continue;
    const role = typeof message.role === 'string' ? message.role : undefined;
    contentSlots(out, message.content, [key, index, 'content'], firstGroup + index, role);
  }
}

/** `prompt`/`input` of completions, embeddings and moderations: a string or an array of strings. */
function stringOrStrings(body: Obj, key: string): TextSlot[] {
  const value = body[key];
  if (typeof value === 'string') return [{ path: [key], text: value, group: 0 }];
  const out: TextSlot[] = [];
  if (!Array.isArray(value)) return out;
  for (let index = 0; index < value.length; index++) {
    const item: unknown = value[index];
    if (typeof item === 'string') out.push({ path: [key, index], text: item, group: index });
  }
  return out;
}

/** Every string inside a JSON value (an MCP tool's arguments), depth first, all in one group. */
function stringLeaves(out: TextSlot[], value: unknown, path: JsonPath, depth = 0): TextSlot[] {
  if (typeof value === 'string') out.push({ path, text: value, group: 0 });
  else if (depth > 32) return out;
  else if (Array.isArray(value))
    for (let i = 0; i < value.length; i++) stringLeaves(out, value[i], [...path, i], depth + 1);
  else if (isObj(value)) for (const [k, v] of Object.entries(value)) stringLeaves(out, v, [...path, k], depth + 1);
  return out;
}

/** Every piece of text of a request body, in order. */
export function requestTextSlots(endpoint: GuardrailEndpoint, body: unknown): TextSlot[] {
  const out: TextSlot[] = [];
  if (!isObj(body)) return out;
  switch (endpoint) {
    case 'mcp':
      // An MCP tools/call's params: every string of its arguments.
      return stringLeaves(out, body.arguments, ['arguments']);
    case 'chatComplete':
      messageSlots(out, body.messages, 'messages', 0);
      return out;
    case 'messages':
      contentSlots(out, body.system, ['system'], -1, 'system');
      messageSlots(out, body.messages, 'messages', 0);
      return out;
    case 'complete':
      return stringOrStrings(body, 'prompt');
    case 'embed':
    case 'moderate':
      return stringOrStrings(body, 'input');
    case 'rerank':
      if (typeof body.query === 'string') out.push({ path: ['query'], text: body.query, group: 0 });
      return out;
    case 'createModelResponse':
      if (typeof body.instructions === 'string')
        out.push({ path: ['instructions'], text: body.instructions, role: 'system', group: -1 });
      if (typeof body.input === 'string') out.push({ path: ['input'], text: body.input, role: 'user', group: 0 });
      else messageSlots(out, body.input, 'input', 0);
      return out;
    default:
      return out;
  }
}

/** Every piece of text of a JSON answer, in order; `group` is the choice. */
export function responseTextSlots(endpoint: GuardrailEndpoint, body: unknown): TextSlot[] {
  const out: TextSlot[] = [];
  if (!isObj(body)) return out;
  switch (endpoint) {
    case 'mcp': {
      // An MCP tool result: its text content items.
      const items = Array.isArray(body.content) ? (body.content as unknown[]) : [];
      for (let index = 0; index < items.length; index++) {
        const item = items[index];
        if (isObj(item) && item.type === 'text' && typeof item.text === 'string')
          out.push({ path: ['content', index, 'text'], text: item.text, role: 'assistant', group: 0 });
      }
      return out;
    }
    case 'chatComplete': {
      const choices = Array.isArray(body.choices) ? (body.choices as unknown[]) : [];
      for (let index = 0; index < choices.length; index++) {
        const choice = choices[index];
        if (isObj(choice) && isObj(choice.message))
          contentSlots(out, choice.message.content, ['choices', index, 'message', 'content'], index, 'assistant');
      }
      return out;
    }
    case 'complete': {
      const choices = Array.isArray(body.choices) ? (body.choices as unknown[]) : [];
      for (let index = 0; index < choices.length; index++) {
        const choice = choices[index];
        if (isObj(choice) && typeof choice.text === 'string')
          out.push({ path: ['choices', index, 'text'], text: choice.text, group: index });
      }
      return out;
    }
    case 'messages':
      contentSlots(out, body.content, ['content'], 0, 'assistant');
      return out;
    case 'createModelResponse': {
      const items = Array.isArray(body.output) ? (body.output as unknown[]) : [];
      for (let index = 0; index < items.length; index++) {
        const item = items[index];
        if (isObj(item) && item.type === 'message')
          contentSlots(out, item.content, ['output', index, 'content'], 0, 'assistant');
      }
      return out;
    }
    default:
      return out;
  }
}
