import type { MaybePromise } from '../lib/maybe-promise.js';

/** Prices in USD per 1,000,000 tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  cached_input?: number | undefined;
  /**
   * Some providers bill a whole request at higher rates once its prompt is longer than a
   * threshold (Gemini Pro above 200k tokens, for example); these rates then apply to every
   * token of that request, output included.
   */
  long_prompt?:
    { threshold_tokens: number; input: number; output: number; cached_input?: number | undefined } | undefined;
}

export interface Usage {
  promptTokens: number | null;
  completionTokens: number | null;
  cachedTokens: number | null;
}

/**
 * What the gateway asks of pricing. Lookups may consult remote sources, so they may answer
 * with a promise; implementations cache, and a remembered answer comes without one.
 */
export interface PricingService {
  priceOf(provider: string, model: string): MaybePromise<ModelPrice | null>;
  /** The model's largest output in tokens from the capabilities data, or null when unknown. */
  maxOutputOf(provider: string, model: string): MaybePromise<number | null>;
  /** Cost in USD of one request, or null when the model or the usage is unknown (never 0 for unknown). */
  costOf(provider: string | null, model: string | null, usage: Usage): MaybePromise<number | null>;
  /** Every model with a local price, for `GET /v1/models` without a provider. */
  models(): Array<{ provider: string; model: string }>;
}

/** Cost from a price and a usage: cached prompt tokens at the cached price when there is one. */
export function costFromPrice(price: ModelPrice, usage: Usage): number | null {
  if (usage.promptTokens === null) return null;
  const long = price.long_prompt;
  const rates = long && usage.promptTokens > long.threshold_tokens ? long : price;
  const cached = Math.min(usage.cachedTokens ?? 0, usage.promptTokens);
  const fresh = usage.promptTokens - cached;
  const micro =
    fresh * rates.input + cached * (rates.cached_input ?? rates.input) + (usage.completionTokens ?? 0) * rates.output;
  return micro / 1_000_000;
}
