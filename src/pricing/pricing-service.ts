/** Prices in USD per 1,000,000 tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  cached_input?: number | undefined;
}

export interface Usage {
  promptTokens: number | null;
  completionTokens: number | null;
  cachedTokens: number | null;
}

/**
 * What the gateway asks of pricing. Lookups may consult remote sources, so they are async;
 * implementations cache, so that most calls answer from memory.
 */
export interface PricingService {
  priceOf(provider: string, model: string): Promise<ModelPrice | null>;
  /** Cost in USD of one request, or null when the model or the usage is unknown (never 0 for unknown). */
  costOf(provider: string | null, model: string | null, usage: Usage): Promise<number | null>;
  /** Every model with a local price, for `GET /v1/models` without a provider. */
  models(): Array<{ provider: string; model: string }>;
}

/** Cost from a price and a usage: cached prompt tokens at the cached price when there is one. */
export function costFromPrice(price: ModelPrice, usage: Usage): number | null {
  if (usage.promptTokens === null) return null;
  const cached = Math.min(usage.cachedTokens ?? 0, usage.promptTokens);
  const fresh = usage.promptTokens - cached;
  const micro = fresh * price.input + cached * (price.cached_input ?? price.input) + (usage.completionTokens ?? 0) * price.output;
  return micro / 1_000_000;
}
