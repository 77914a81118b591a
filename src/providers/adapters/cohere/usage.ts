import type { TokenUsage } from '../../usage.js';
import { finite, isObject, type CohereUsage, type Json } from './cohere-types.js';

/**
 * Usage for logs, cost and limits. Cohere reports two counts: `billed_units` (what the account
 * is charged for) and `tokens` (everything the model saw, prompt template included). Cost must
 * follow the bill, so billed units win; `tokens` is the fallback when no bill is given.
 */
export function usageOf(usage: CohereUsage | undefined): TokenUsage | null {
  if (!isObject(usage)) return null;
  const billed = isObject(usage.billed_units) ? usage.billed_units : {};
  const tokens = isObject(usage.tokens) ? usage.tokens : {};
  const prompt = finite(billed.input_tokens) ?? finite(tokens.input_tokens);
  const completion = finite(billed.output_tokens) ?? finite(tokens.output_tokens);
  if (prompt === null && completion === null) return null;
  return {
    promptTokens: prompt,
    completionTokens: completion,
    cachedTokens: null,
    totalTokens: (prompt ?? 0) + (completion ?? 0),
  };
}

/** The OpenAI `usage` object of a chat completion. */
export function openAIUsage(usage: TokenUsage): Json {
  return {
    prompt_tokens: usage.promptTokens ?? 0,
    completion_tokens: usage.completionTokens ?? 0,
    total_tokens: usage.totalTokens ?? 0,
  };
}
