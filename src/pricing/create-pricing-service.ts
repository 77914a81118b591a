import type { Config } from '../config/schema.js';
import type { Clock } from '../lib/clock.js';
import { andThen, type MaybePromise } from '../lib/maybe-promise.js';
import { getProvider } from '../providers/registry.js';
import type { Logger } from '../telemetry/logger.js';
import { parseCapabilitiesDocument, type ModelCapabilities } from './capability-formats.js';
import { createLayeredLookup, type Found } from './layered-lookup.js';
import { SHIPPED_CAPABILITIES_DIR, SHIPPED_PRICING_DIR } from './local-pricing.js';
import {
  createLogStoreDirectory,
  createProxySource,
  hasProviderFile,
  loadLocalDirectory,
  type DocumentParser,
  type FetchLike,
  type ModelConfigSource,
} from './model-config-sources.js';
import { priceAlias } from './price-aliases.js';
import { parsePricingDocument } from './price-formats.js';
import { costFromPrice, type ModelPrice, type PricingService, type Usage } from './pricing-service.js';

/** The spec's memory cache: one hour. */
export const PRICE_CACHE_TTL_MS = 60 * 60 * 1000;
/** How long "no source knows this model" and a failed proxy call are remembered. */
export const PRICE_MISS_TTL_MS = 5 * 60 * 1000;
/** Pricing runs before a request's log record is written; a slow proxy must not hold it long. */
export const PROXY_TIMEOUT_MS = 2_000;

export interface PriceLookup {
  provider: string;
  model: string;
  /** The entry that priced it: the model, or its undated id. */
  entry: string;
  source: Found<ModelPrice>['source'];
  price: ModelPrice;
}

export interface CapabilitiesLookup {
  provider: string;
  model: string;
  entry: string;
  source: Found<ModelCapabilities>['source'];
  capabilities: ModelCapabilities;
}

/** The pricing the gateway uses, plus the lookups the model-configs route shows. */
export interface ModelConfigService extends PricingService {
  lookupPrice(provider: string, model: string): Promise<PriceLookup | null>;
  lookupCapabilities(provider: string, model: string): Promise<CapabilitiesLookup | null>;
  capabilitiesOf(provider: string, model: string): Promise<ModelCapabilities | null>;
}

const pricingParser: DocumentParser<ModelPrice> = (json) => {
  const { prices, invalid } = parsePricingDocument(json);
  return { entries: prices, invalid };
};
const capabilitiesParser: DocumentParser<ModelCapabilities> = (json) => {
  const { capabilities, invalid } = parseCapabilitiesDocument(json);
  return { entries: capabilities, invalid };
};

/**
 * Model prices and capabilities from the spec's sources, in its order: memory cache (1 hour),
 * the model-configs proxy (when `model_configs_proxy_fetch_enabled`), the log-store files,
 * then the local files (default: the shipped `config/pricing` and `config/capabilities`).
 * A model no source prices has an unknown cost (`null`), never 0; no source failing ever
 * fails a gateway request.
 */
export function createPricingService(deps: {
  config: Config;
  clock: Clock;
  logger: Logger;
  fetchImpl?: FetchLike;
  proxyTimeoutMs?: number;
}): ModelConfigService {
  const { config, clock, logger } = deps;
  const localPricing = loadLocalDirectory(
    config.model_configs_pricing_local_path ?? SHIPPED_PRICING_DIR,
    pricingParser,
  );
  const localCapabilities = loadLocalDirectory(
    config.model_configs_capabilities_local_path ?? SHIPPED_CAPABILITIES_DIR,
    capabilitiesParser,
  );

  const proxyUrl = config.model_configs_proxy_fetch_enabled ? config.model_configs_proxy_url : undefined;
  if (config.model_configs_proxy_fetch_enabled && !proxyUrl) {
    logger.warn(
      'MODEL_CONFIGS_PROXY_FETCH_ENABLED is ON but MODEL_CONFIGS_PROXY_URL is not set; model prices come from the files only',
    );
  }
  // The route is public: only providers the gateway can reach, or that someone keeps a file
  // for, are asked of the proxy, so that made-up ids do not turn into outgoing requests.
  const shouldAsk = (provider: string) =>
    getProvider(provider) !== undefined ||
    localPricing.providers().has(provider) ||
    localCapabilities.providers().has(provider) ||
    hasProviderFile(config.model_configs_pricing_log_store_path, provider) ||
    hasProviderFile(config.model_configs_capabilities_log_store_path, provider);

  function sources<T>(
    path: 'pricing' | 'general',
    parse: DocumentParser<T>,
    logStoreDir: string | undefined,
    local: ModelConfigSource<T>,
    what: string,
  ): ModelConfigSource<T>[] {
    const list: ModelConfigSource<T>[] = [];
    if (proxyUrl) {
      list.push(
        createProxySource({
          baseUrl: proxyUrl,
          path,
          parse,
          clock,
          logger,
          ttlMs: PRICE_CACHE_TTL_MS,
          retryMs: PRICE_MISS_TTL_MS,
          timeoutMs: deps.proxyTimeoutMs ?? PROXY_TIMEOUT_MS,
          fetchImpl: deps.fetchImpl,
          shouldAsk,
        }),
      );
    }
    if (logStoreDir) list.push(createLogStoreDirectory({ dir: logStoreDir, parse, logger, what }));
    list.push(local);
    return list;
  }

  const prices = createLayeredLookup({
    sources: sources('pricing', pricingParser, config.model_configs_pricing_log_store_path, localPricing, 'pricing'),
    clock,
    ttlMs: PRICE_CACHE_TTL_MS,
    missTtlMs: PRICE_MISS_TTL_MS,
  });
  const capabilities = createLayeredLookup({
    sources: sources(
      'general',
      capabilitiesParser,
      config.model_configs_capabilities_log_store_path,
      localCapabilities,
      'capabilities',
    ),
    clock,
    ttlMs: PRICE_CACHE_TTL_MS,
    missTtlMs: PRICE_MISS_TTL_MS,
  });

  async function lookupPrice(provider: string, model: string): Promise<PriceLookup | null> {
    const found = await prices.lookup(provider, model);
    if (found) return { provider, model, entry: found.entry, source: found.source, price: found.value };
    const alias = priceAlias(provider, model);
    const aliased = alias ? await prices.lookup(alias.provider, alias.model) : null;
    return aliased
      ? { provider, model, entry: `${alias!.provider}/${aliased.entry}`, source: aliased.source, price: aliased.value }
      : null;
  }

  async function lookupCapabilities(provider: string, model: string): Promise<CapabilitiesLookup | null> {
    const found = await capabilities.lookup(provider, model);
    return found ? { provider, model, entry: found.entry, source: found.source, capabilities: found.value } : null;
  }

  const localModels = [...localPricing.providers()].flatMap(([provider, entries]) =>
    [...entries.keys()].map((model) => ({ provider, model })),
  );

  // A model's own remembered entry (nearly every request) answers at once: no lookup object, no async steps.
  const priceOf = (provider: string, model: string): MaybePromise<ModelPrice | null> => {
    const known = prices.peek(provider, model);
    return known ? known.value : lookupPrice(provider, model).then((found) => found?.price ?? null);
  };

  return {
    lookupPrice,
    lookupCapabilities,
    priceOf,
    capabilitiesOf: async (provider, model) => (await lookupCapabilities(provider, model))?.capabilities ?? null,
    maxOutputOf(provider, model) {
      const known = capabilities.peek(provider, model);
      return known
        ? (known.value.max_output_tokens ?? null)
        : lookupCapabilities(provider, model).then((found) => found?.capabilities.max_output_tokens ?? null);
    },
    models: () => localModels,
    costOf(provider: string | null, model: string | null, usage: Usage): MaybePromise<number | null> {
      if (!provider || !model) return null;
      return andThen(priceOf(provider, model), (price) => (price ? costFromPrice(price, usage) : null));
    },
  };
}
