import type { TokenUsage } from '../../usage.js';
import type { AnthropicUsage } from './wire-types.js';

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/**
 * Anthropic's `input_tokens` leaves out the tokens read from or written to the prompt cache;
 * OpenAI's `prompt_tokens` counts every input token. So prompt = input + cache reads + cache
 * writes, and cache reads are the cached tokens (what OpenAI's `cached_tokens` means).
 */
export function tokenUsage(usage: AnthropicUsage | undefined | null): TokenUsage | null {
  if (!usage || (usage.input_tokens == null && usage.output_tokens == null)) return null;
  const cached = count(usage.cache_read_input_tokens);
  const prompt = count(usage.input_tokens) + cached + count(usage.cache_creation_input_tokens);
  const completion = count(usage.output_tokens);
  return { promptTokens: prompt, completionTokens: completion, cachedTokens: cached, totalTokens: prompt + completion };
}

/** The OpenAI `usage` object for a response body or the last stream chunk. */
export function openAIUsage(usage: TokenUsage): Record<string, unknown> {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.totalTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens },
  };
}

/** Anthropic `stop_reason` → OpenAI `finish_reason`; unknown future reasons count as a normal stop. */
export function finishReason(stopReason: string | null | undefined): string | null {
  switch (stopReason) {
    case null:
    case undefined:
      return null;
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default: // end_turn, stop_sequence, pause_turn
      return 'stop';
  }
}
