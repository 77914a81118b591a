import type { TokenUsage } from '../../usage.js';
import type { StreamContext } from '../types.js';
import { isObject, type CohereChatResponse, type CohereToolCall, type Json } from './cohere-types.js';
import { openAIUsage, usageOf } from './usage.js';

/**
 * Cohere's `finish_reason` (documented upper case; older answers used lower case) as OpenAI's.
 * ERROR and TIMEOUT have no OpenAI equivalent: a stream treats them as an error instead.
 */
export function finishReasonOf(reason: unknown): string | null {
  if (typeof reason !== 'string' || reason === '') return null;
  switch (reason.toUpperCase()) {
    case 'MAX_TOKENS':
      return 'length';
    case 'TOOL_CALL':
      return 'tool_calls';
    case 'CONTENT_BLOCKED':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/** Whether a finish reason says generation failed rather than ended. */
export function isFailedFinish(reason: unknown): boolean {
  return (
    typeof reason === 'string' && ['ERROR', 'TIMEOUT', 'ERROR_LIMIT', 'ERROR_TOXIC'].includes(reason.toUpperCase())
  );
}

export function toOpenAIToolCall(call: CohereToolCall): Json {
  return {
    id: call.id ?? '',
    type: 'function',
    function: { name: call.function?.name ?? '', arguments: call.function?.arguments ?? '' },
  };
}

/** A `/v2/chat` answer as a `chat.completion`. */
export function toChatCompletion(body: unknown, ctx: StreamContext): { body: Json; usage: TokenUsage | null } {
  const response = (isObject(body) ? body : {}) as CohereChatResponse;
  const message = isObject(response.message) ? response.message : {};
  const text = (Array.isArray(message.content) ? message.content : [])
    .filter((part) => isObject(part) && part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text)
    .join('');
  const toolCalls = (Array.isArray(message.tool_calls) ? message.tool_calls : [])
    .filter(isObject)
    .map(toOpenAIToolCall);
  const usage = usageOf(response.usage);
  const assistant: Json = {
    role: 'assistant',
    content: text === '' && toolCalls.length > 0 ? null : text,
    refusal: null,
  };
  if (toolCalls.length > 0) assistant.tool_calls = toolCalls;
  return {
    body: {
      id: ctx.id,
      object: 'chat.completion',
      created: ctx.created,
      model: ctx.model ?? '',
      choices: [
        {
          index: 0,
          message: assistant,
          logprobs: null,
          finish_reason: finishReasonOf(response.finish_reason) ?? 'stop',
        },
      ],
      ...(usage ? { usage: openAIUsage(usage) } : {}),
    },
    usage,
  };
}
