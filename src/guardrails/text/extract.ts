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

function contentSlots(content: unknown, path: JsonPath, group: number, role: string | undefined): TextSlot[] {
  const withRole = (slot: Omit<TextSlot, 'role'>): TextSlot => (role === undefined ? slot : { ...slot, role });
  if (typeof content === 'string') return [withRole({ path, text: content, group })];
  if (!Array.isArray(content)) return [];
  const slots: TextSlot[] = [];
  content.forEach((part, index) => {
    if (isObj(part) && typeof part.type === 'string' && TEXT_PART_TYPES.has(part.type) && typeof part.text === 'string')
      slots.push(withRole({ path: [...path, index, 'text'], text: part.text, group }));
  });
  return slots;
}

function messageSlots(messages: unknown, key: string, firstGroup: number): TextSlot[] {
  if (!Array.isArray(messages)) return [];
  return messages.flatMap((message, index) =>
    isObj(message)
      ? contentSlots(
          message.content,
          [key, index, 'content'],
          firstGroup + index,
          typeof message.role === 'string' ? message.role : undefined,
        )
      : [],
  );
}

/** `prompt`/`input` of completions, embeddings and moderations: a string or an array of strings. */
function stringOrStrings(body: Obj, key: string): TextSlot[] {
  const value = body[key];
  if (typeof value === 'string') return [{ path: [key], text: value, group: 0 }];
  if (!Array.isArray(value)) return [];
  return value.flatMap((item, index) =>
    typeof item === 'string' ? [{ path: [key, index], text: item, group: index }] : [],
  );
}

/** Every string inside a JSON value (an MCP tool's arguments), depth first, all in one group. */
function stringLeaves(value: unknown, path: JsonPath, depth = 0): TextSlot[] {
  if (typeof value === 'string') return [{ path, text: value, group: 0 }];
  if (depth > 32) return [];
  if (Array.isArray(value)) return value.flatMap((item, i) => stringLeaves(item, [...path, i], depth + 1));
  if (isObj(value)) return Object.entries(value).flatMap(([k, v]) => stringLeaves(v, [...path, k], depth + 1));
  return [];
}

/** Every piece of text of a request body, in order. */
export function requestTextSlots(endpoint: GuardrailEndpoint, body: unknown): TextSlot[] {
  if (!isObj(body)) return [];
  switch (endpoint) {
    case 'mcp':
      // An MCP tools/call's params: every string of its arguments.
      return stringLeaves(body.arguments, ['arguments']);
    case 'chatComplete':
      return messageSlots(body.messages, 'messages', 0);
    case 'messages':
      return [...contentSlots(body.system, ['system'], -1, 'system'), ...messageSlots(body.messages, 'messages', 0)];
    case 'complete':
      return stringOrStrings(body, 'prompt');
    case 'embed':
    case 'moderate':
      return stringOrStrings(body, 'input');
    case 'rerank':
      return typeof body.query === 'string' ? [{ path: ['query'], text: body.query, group: 0 }] : [];
    case 'createModelResponse': {
      const instructions: TextSlot[] =
        typeof body.instructions === 'string'
          ? [{ path: ['instructions'], text: body.instructions, role: 'system', group: -1 }]
          : [];
      if (typeof body.input === 'string')
        return [...instructions, { path: ['input'], text: body.input, role: 'user', group: 0 }];
      return [...instructions, ...messageSlots(body.input, 'input', 0)];
    }
    default:
      return [];
  }
}

/** Every piece of text of a JSON answer, in order; `group` is the choice. */
export function responseTextSlots(endpoint: GuardrailEndpoint, body: unknown): TextSlot[] {
  if (!isObj(body)) return [];
  switch (endpoint) {
    case 'mcp':
      // An MCP tool result: its text content items.
      if (!Array.isArray(body.content)) return [];
      return body.content.flatMap((item, index) =>
        isObj(item) && item.type === 'text' && typeof item.text === 'string'
          ? [{ path: ['content', index, 'text'], text: item.text, role: 'assistant', group: 0 }]
          : [],
      );
    case 'chatComplete': {
      if (!Array.isArray(body.choices)) return [];
      return body.choices.flatMap((choice, index) =>
        isObj(choice) && isObj(choice.message)
          ? contentSlots(choice.message.content, ['choices', index, 'message', 'content'], index, 'assistant')
          : [],
      );
    }
    case 'complete': {
      if (!Array.isArray(body.choices)) return [];
      return body.choices.flatMap((choice, index) =>
        isObj(choice) && typeof choice.text === 'string'
          ? [{ path: ['choices', index, 'text'], text: choice.text, group: index }]
          : [],
      );
    }
    case 'messages':
      return contentSlots(body.content, ['content'], 0, 'assistant');
    case 'createModelResponse': {
      if (!Array.isArray(body.output)) return [];
      return body.output.flatMap((item, index) =>
        isObj(item) && item.type === 'message'
          ? contentSlots(item.content, ['output', index, 'content'], 0, 'assistant')
          : [],
      );
    }
    default:
      return [];
  }
}
