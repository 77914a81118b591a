import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { PACKAGE_ROOT } from '../lib/package-root.js';
import { z } from 'zod';

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

const price = z.number().finite().min(0);
const pricingFile = z.object({
  $comment: z.string().optional(),
  currency: z.literal('USD'),
  models: z.record(z.string(), z.object({ input: price, output: price, cached_input: price.optional() }).strict()),
});

export const SHIPPED_PRICING_DIR = join(PACKAGE_ROOT, 'config', 'pricing');

const DATE_SUFFIX = /-\d{4}-\d{2}-\d{2}$/;

/**
 * Model prices from local JSON files (`<provider>.json`), read once at start-up. A model
 * without a price yields `null` cost: unknown, never zero.
 */
export function loadLocalPricing(dir: string) {
  const byProvider = new Map<string, Record<string, ModelPrice>>();
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.json'))) {
    const parsed = pricingFile.safeParse(JSON.parse(readFileSync(join(dir, file), 'utf8')));
    if (!parsed.success) throw new Error(`pricing file ${join(dir, file)} is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    byProvider.set(basename(file, '.json'), parsed.data.models);
  }

  function priceOf(provider: string, model: string): ModelPrice | null {
    const models = byProvider.get(provider);
    if (!models) return null;
    return models[model] ?? models[model.replace(DATE_SUFFIX, '')] ?? null;
  }

  return {
    priceOf,
    /** Every priced model, for `GET /v1/models` without a provider. */
    models: () => [...byProvider].flatMap(([provider, models]) => Object.keys(models).map((model) => ({ provider, model }))),
    /** Cost in USD of one request, or null when the model or the usage is unknown. */
    costOf(provider: string | null, model: string | null, usage: Usage): number | null {
      if (!provider || !model || usage.promptTokens === null) return null;
      const p = priceOf(provider, model);
      if (!p) return null;
      const cached = Math.min(usage.cachedTokens ?? 0, usage.promptTokens);
      const fresh = usage.promptTokens - cached;
      const micro = fresh * p.input + cached * (p.cached_input ?? p.input) + (usage.completionTokens ?? 0) * p.output;
      return micro / 1_000_000;
    },
  };
}

export type Pricing = ReturnType<typeof loadLocalPricing>;
