import type { TokenUsage } from '../../usage.js';
import type { StreamContext } from '../types.js';
import { finishReason, openAIUsage, tokenUsage } from './usage-and-finish.js';
import { isObject, type AnthropicMessage, type Json, type ResponseBlock } from './wire-types.js';

/**
 * A Message as a `chat.completion`: text blocks joined into `content`, `tool_use` blocks as
 * `tool_calls` (input re-encoded as the JSON string OpenAI clients parse). Thinking and server
 * tool blocks have no OpenAI equivalent and are left out.
 */
export function messageToChatCompletion(raw: unknown, ctx: StreamContext): { body: Json; usage: TokenUsage | null } {
  const message = asMessage(raw);
  const blocks = message.content ?? [];
  const text = textOf(blocks);
  const toolCalls = blocks
    .filter((block) => block.type === 'tool_use')
    .map((block) => ({
      id: String(block.id),
      type: 'function',
      function: { name: String(block.name), arguments: JSON.stringify(block.input ?? {}) },
    }));
  const usage = tokenUsage(message.usage);
  const body: Json = {
    id: ctx.id,
    object: 'chat.completion',
    created: ctx.created,
    model: message.model ?? ctx.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text === '' && toolCalls.length > 0 ? null : text,
          refusal: null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: finishReason(message.stop_reason) ?? 'stop',
      },
    ],
    ...(usage ? { usage: openAIUsage(usage) } : {}),
  };
  return { body, usage };
}

/** A Message as a legacy `text_completion`. */
export function messageToTextCompletion(raw: unknown, ctx: StreamContext): { body: Json; usage: TokenUsage | null } {
  const message = asMessage(raw);
  const text = textOf(message.content ?? []);
  const usage = tokenUsage(message.usage);
  const body: Json = {
    id: ctx.id,
    object: 'text_completion',
    created: ctx.created,
    model: message.model ?? ctx.model,
    choices: [{ text, index: 0, logprobs: null, finish_reason: finishReason(message.stop_reason) ?? 'stop' }],
    ...(usage ? { usage: openAIUsage(usage) } : {}),
  };
  return { body, usage };
}

/** A Message's `content` is a list of blocks, each an object with a `type`. */
export function messageProblem(body: Readonly<Record<string, unknown>>): string | null {
  const { content } = body;
  if (!Array.isArray(content)) return '`content` is not a list of content blocks';
  const bad = content.findIndex((block) => !isObject(block) || typeof block.type !== 'string');
  return bad < 0 ? null : `\`content[${bad}]\` is not a content block`;
}

function asMessage(raw: unknown): AnthropicMessage {
  const message = (isObject(raw) ? raw : {}) as AnthropicMessage;
  return Array.isArray(message.content) ? message : { ...message, content: [] };
}

function textOf(blocks: ResponseBlock[]): string {
  return blocks.map((block) => (block.type === 'text' && typeof block.text === 'string' ? block.text : '')).join('');
}
