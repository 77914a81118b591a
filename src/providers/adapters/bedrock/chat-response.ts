import type { TokenUsage } from '../../usage.js';
import type { StreamContext } from '../types.js';

type Json = Record<string, unknown>;

/**
 * Converse `stopReason` → OpenAI `finish_reason`. Guardrail and content-filter stops are
 * `content_filter`; a full context window is `length`; anything new falls back to `stop`.
 */
export function finishReason(stopReason: unknown): string {
  switch (stopReason) {
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      return 'stop';
  }
}

const count = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/**
 * Bedrock's TokenUsage in both shapes. Bedrock counts cache reads and writes apart from
 * `inputTokens`; OpenAI's `prompt_tokens` includes cached tokens, so they are added back in,
 * and cache reads become `cached_tokens`.
 */
export function readUsage(raw: unknown): { usage: TokenUsage; body: Json } | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const usage = raw as Json;
  const input = count(usage.inputTokens);
  const output = count(usage.outputTokens);
  const cacheRead = count(usage.cacheReadInputTokens);
  const cacheWrite = count(usage.cacheWriteInputTokens);
  const prompt = input === null ? null : input + (cacheRead ?? 0) + (cacheWrite ?? 0);
  const total = count(usage.totalTokens) ?? (prompt === null ? null : prompt + (output ?? 0));
  const body: Json = { prompt_tokens: prompt ?? 0, completion_tokens: output ?? 0, total_tokens: total ?? 0 };
  if (cacheRead !== null) body.prompt_tokens_details = { cached_tokens: cacheRead };
  return {
    usage: { promptTokens: prompt, completionTokens: output, cachedTokens: cacheRead, totalTokens: total },
    body,
  };
}

/** A Converse answer as a `chat.completion`: text blocks joined, `toolUse` blocks as tool calls. */
export function toChatCompletion(raw: unknown, ctx: StreamContext): { body: Json; usage: TokenUsage | null } {
  const answer = (typeof raw === 'object' && raw !== null ? raw : {}) as Json;
  const message = ((answer.output as Json | undefined)?.message ?? {}) as Json;
  const blocks = Array.isArray(message.content) ? (message.content as Json[]) : [];
  let text = '';
  const toolCalls: Json[] = [];
  for (const block of blocks) {
    if (typeof block.text === 'string') text += block.text;
    const toolUse = block.toolUse as Json | undefined;
    if (toolUse && typeof toolUse.toolUseId === 'string') {
      toolCalls.push({
        id: toolUse.toolUseId,
        type: 'function',
        function: { name: toolUse.name, arguments: JSON.stringify(toolUse.input ?? {}) },
      });
    }
  }
  const usage = readUsage(answer.usage);
  const body: Json = {
    id: ctx.id,
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.model ?? '',
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
        finish_reason: finishReason(answer.stopReason),
      },
    ],
  };
  if (usage) body.usage = usage.body;
  return { body, usage: usage?.usage ?? null };
}
