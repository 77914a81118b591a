import type { TextCounter } from './tokenizers.js';

/**
 * An upper bound of the prompt tokens a request will be billed for, over every field that
 * becomes prompt. Where the provider renders a field in a hidden format (tools, tool calls,
 * schemas), its JSON is counted: JSON spells every key and quote, so it is never shorter.
 * docs/limits.md explains each figure.
 */

/** OpenAI's chat format: each message is wrapped in a few tokens (start, role, separator, end). */
export const TOKENS_PER_MESSAGE = 4;
/** And the reply is primed with the assistant's header. */
export const REPLY_PRIMING_TOKENS = 3;
/** Each tool or function definition: OpenAI's rendering adds a few tokens around the JSON. */
export const TOKENS_PER_TOOL = 10;

/**
 * Images without their size: the most the provider can bill for the detail level. OpenAI's
 * tile models bill 85 + 170 per 512-px tile (at most 8 tiles: 1,445), its patch models up to
 * 1,536 patches × 2.46; Anthropic about 1,600 for its largest size. 3,840 covers them all.
 */
export const IMAGE_TOKENS_LOW = 85;
export const IMAGE_TOKENS_HIGH = 3_840;
/** gpt-4o-mini bills images at 2,833 base + 5,667 per tile (at most 8 tiles). */
const MINI_IMAGE_TOKENS_LOW = 2_833;
const MINI_IMAGE_TOKENS_HIGH = 2_833 + 8 * 5_667;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export interface PromptCounting {
  count: TextCounter;
  model: string | null;
  /** Whether the model prices images as gpt-4o-mini does: found once, on the first image part. */
  miniImages?: boolean;
}

function imageTokens(part: Json, ctx: PromptCounting): number {
  const source = isObject(part.image_url) ? part.image_url : part;
  const low = source.detail === 'low';
  // Once per request, not per part: the client chooses both the model's length and the parts' number.
  const mini = (ctx.miniImages ??= ctx.model !== null && /(^|\/)gpt-4o-mini/.test(ctx.model));
  if (mini) return low ? MINI_IMAGE_TOKENS_LOW : MINI_IMAGE_TOKENS_HIGH;
  return low ? IMAGE_TOKENS_LOW : IMAGE_TOKENS_HIGH;
}

const IMAGE_PARTS = new Set(['image_url', 'input_image', 'image']);
const TEXT_PARTS = new Set(['text', 'input_text', 'output_text']);

/** A message's content: text, parts (text, images, anything else as its JSON). */
function contentTokens(content: unknown, ctx: PromptCounting): number {
  if (content === undefined || content === null) return 0;
  if (typeof content === 'string') return ctx.count(content);
  if (!Array.isArray(content)) return ctx.count(JSON.stringify(content));
  let total = 0;
  for (const part of content) {
    if (typeof part === 'string') total += ctx.count(part);
    else if (isObject(part) && typeof part.type === 'string' && IMAGE_PARTS.has(part.type))
      total += imageTokens(part, ctx);
    else if (
      isObject(part) &&
      typeof part.type === 'string' &&
      TEXT_PARTS.has(part.type) &&
      typeof part.text === 'string'
    )
      total += ctx.count(part.text);
    else if (isObject(part) && (part.type === 'tool_result' || part.type === 'function_call_output'))
      total +=
        ctx.count(JSON.stringify({ ...part, content: undefined, output: undefined })) +
        contentTokens(part.content ?? part.output, ctx);
    else total += ctx.count(JSON.stringify(part));
  }
  return total;
}

/**
 * One message (or Responses input item): its content, plus every other field (role, name,
 * tool_calls with their names and arguments, tool_call_id, …) as JSON, plus the wrapping.
 */
function messageTokens(message: unknown, ctx: PromptCounting): number {
  if (!isObject(message)) return TOKENS_PER_MESSAGE + contentTokens(message, ctx);
  // Copied key by key: an object rest (`{ content, output, ...rest }`) takes a slow runtime path.
  let rest: Json | null = null;
  for (const key of Object.keys(message)) if (key !== 'content' && key !== 'output') (rest ??= {})[key] = message[key];
  const fields = rest ? ctx.count(JSON.stringify(rest)) : 0;
  return TOKENS_PER_MESSAGE + fields + contentTokens(message.content, ctx) + contentTokens(message.output, ctx);
}

const messagesTokens = (messages: unknown, ctx: PromptCounting): number =>
  Array.isArray(messages) ? messages.reduce<number>((sum, m) => sum + messageTokens(m, ctx), 0) : 0;

/** Strings count as text, token arrays as their length, lists as the sum of their items. */
function inputTokens(input: unknown, ctx: PromptCounting): number {
  if (typeof input === 'string') return ctx.count(input);
  if (typeof input === 'number') return 1;
  if (Array.isArray(input)) return input.reduce<number>((sum, item) => sum + inputTokens(item, ctx), 0);
  return input === undefined || input === null ? 0 : ctx.count(JSON.stringify(input));
}

const jsonTokens = (value: unknown, ctx: PromptCounting): number =>
  value === undefined || value === null ? 0 : ctx.count(JSON.stringify(value));
const toolsTokens = (tools: unknown, ctx: PromptCounting): number =>
  Array.isArray(tools) ? tools.length * TOKENS_PER_TOOL + jsonTokens(tools, ctx) : jsonTokens(tools, ctx);

/** Fields of chat-like requests (chat, Responses, Anthropic messages) that reach the model besides messages. */
function sideTokens(body: Json, ctx: PromptCounting): number {
  return (
    toolsTokens(body.tools, ctx) +
    toolsTokens(body.functions, ctx) +
    jsonTokens(body.tool_choice, ctx) +
    jsonTokens(body.function_call, ctx) +
    jsonTokens(body.response_format, ctx) +
    jsonTokens(isObject(body.text) ? body.text.format : undefined, ctx) +
    jsonTokens(body.prediction, ctx)
  );
}

/**
 * Prompt tokens of a JSON request of the given endpoint family, at most what the provider will
 * bill. Families without a text prompt (images, audio, pass-through) are bounded by the
 * caller from the body's size.
 */
export function promptTokens(endpointType: string, body: Json, ctx: PromptCounting): number {
  switch (endpointType) {
    case 'chatComplete':
      return (
        REPLY_PRIMING_TOKENS +
        messagesTokens(body.messages, ctx) +
        systemTokens(body.system, ctx) +
        sideTokens(body, ctx)
      );
    case 'createModelResponse': {
      const input =
        typeof body.input === 'string' ? TOKENS_PER_MESSAGE + ctx.count(body.input) : messagesTokens(body.input, ctx);
      const instructions =
        typeof body.instructions === 'string' ? TOKENS_PER_MESSAGE + ctx.count(body.instructions) : 0;
      return REPLY_PRIMING_TOKENS + input + instructions + sideTokens(body, ctx);
    }
    case 'complete':
      return inputTokens(body.prompt, ctx) + inputTokens(body.suffix, ctx);
    case 'embed':
    case 'moderate':
      return inputTokens(body.input, ctx);
    case 'rerank':
      return inputTokens(body.query, ctx) + inputTokens(body.documents, ctx);
    default:
      return NaN;
  }
}

/** Anthropic-style `system`: a string or text blocks. */
function systemTokens(system: unknown, ctx: PromptCounting): number {
  return system === undefined || system === null ? 0 : TOKENS_PER_MESSAGE + contentTokens(system, ctx);
}
