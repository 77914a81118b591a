import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { PACKAGE_ROOT } from '../lib/package-root.js';
import { z } from 'zod';

import { costFromPrice, type ModelPrice, type PricingService, type Usage } from './pricing-service.js';

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
    priceOf: async (provider: string, model: string) => priceOf(provider, model),
    models: () => [...byProvider].flatMap(([provider, models]) => Object.keys(models).map((model) => ({ provider, model }))),
    async costOf(provider: string | null, model: string | null, usage: Usage): Promise<number | null> {
      if (!provider || !model) return null;
      const price = priceOf(provider, model);
      return price ? costFromPrice(price, usage) : null;
    },
  } satisfies PricingService;
}

export type { PricingService as Pricing };
