import { join } from 'node:path';

import { PACKAGE_ROOT } from '../lib/package-root.js';
import { matchEntry } from './layered-lookup.js';
import { loadLocalDirectory } from './model-config-sources.js';
import { parsePricingDocument } from './price-formats.js';
import { costFromPrice, type ModelPrice, type PricingService, type Usage } from './pricing-service.js';

/** The defaults shipped with svcgw, used when MODEL_CONFIGS_PRICING_LOCAL_PATH is not set. */
export const SHIPPED_PRICING_DIR = join(PACKAGE_ROOT, 'config', 'pricing');
/** The defaults shipped with svcgw, used when MODEL_CONFIGS_CAPABILITIES_LOCAL_PATH is not set. */
export const SHIPPED_CAPABILITIES_DIR = join(PACKAGE_ROOT, 'config', 'capabilities');

/**
 * Model prices from local JSON files (`<provider>.json`, either format of docs/pricing.md)
 * alone, read once at start-up. The server uses `createPricingService`, which puts the proxy
 * and log-store sources and a cache in front of these files; this stays for tools and tests
 * that want the files only.
 */
export function loadLocalPricing(dir: string): PricingService {
  const local = loadLocalDirectory<ModelPrice>(dir, (json) => {
    const { prices, invalid } = parsePricingDocument(json);
    return { entries: prices, invalid };
  });
  const priceOf = (provider: string, model: string): ModelPrice | null => {
    const entries = local.providers().get(provider);
    return entries ? (matchEntry(entries, model)?.value ?? null) : null;
  };
  return {
    priceOf,
    maxOutputOf: () => null, // prices only: no capabilities
    models: () =>
      [...local.providers()].flatMap(([provider, entries]) =>
        [...entries.keys()].map((model) => ({ provider, model })),
      ),
    costOf(provider: string | null, model: string | null, usage: Usage): number | null {
      if (!provider || !model) return null;
      const price = priceOf(provider, model);
      return price ? costFromPrice(price, usage) : null;
    },
  };
}

export type { PricingService as Pricing };
