import type { Config } from '../config/schema.js';
import type { FeatureFlags } from '../features/flags.js';
import type { Clock } from '../lib/clock.js';
import type { Db } from '../storage/database.js';
import type { ModelPrice } from '../pricing/pricing-service.js';
import type { Logger } from '../telemetry/logger.js';
import type { Repositories } from '../storage/repositories/index.js';
import type { CounterStore } from './counter-store.js';
import { createLimitsService, type LimitsService } from './limits-service.js';
import { createMemoryCounterStore } from './memory-counter-store.js';
import { createResetWorker } from './reset-worker.js';
import { createUsageRecorder, type AlertSink } from './usage-recorder.js';

export interface Limits {
  service: LimitsService;
  store: CounterStore;
  /** Writes pending usage and counters; called on shutdown and by tests. */
  flush(): Promise<void>;
  /** Periodic budget resets (every 30 s; tests call `runOnce`). */
  resets: ReturnType<typeof createResetWorker>;
  close(): Promise<void>;
}

/** `default_model_price` ("3/15": USD per million input/output tokens), validated by the settings schema. */
function parseDefaultPrice(setting: string | undefined): ModelPrice | undefined {
  if (!setting) return undefined;
  const [input, output] = setting.split('/').map(Number);
  return { input: input!, output: output! };
}

/** Control-plane paths whose changes alter which limits apply. */
const LIMIT_SOURCES = ['/v1/policies/', '/v1/api-keys', '/v1/workspaces', '/v1/admin/workspaces'];

/** Whether a control-plane request may have changed which limits apply (the server then clears the caches). */
export function changesLimits(method: string, url: string): boolean {
  return method !== 'GET' && LIMIT_SOURCES.some((prefix) => url.startsWith(prefix));
}

/**
 * Builds the limits of gateway traffic: the counter store (in-process, persisted in the
 * database), the usage recorder and the service the gateway calls. Any mutation of policies,
 * keys or workspaces clears the service's caches before its response is sent.
 */
export async function createLimits(deps: {
  features: FeatureFlags;
  config: Config;
  db: Db;
  repos: Repositories;
  clock: Clock;
  logger: Logger;
  alerts: AlertSink;
  store?: CounterStore;
  onBudgetsReset?: () => void;
}): Promise<Limits> {
  const redisUrl = deps.config.redis_url;
  const memory =
    deps.store || redisUrl
      ? null
      : await createMemoryCounterStore({ db: deps.db, logger: deps.logger, now: () => deps.clock.now() });
  const store =
    deps.store ??
    (redisUrl
      ? await (
          await import('./redis-counter-store.js')
        ).createRedisCounterStore({ url: redisUrl, keyPrefix: deps.config.redis_key_prefix, logger: deps.logger })
      : memory!);
  const recorder = createUsageRecorder({ db: deps.db, clock: deps.clock, logger: deps.logger, alerts: deps.alerts });
  const service = createLimitsService({
    features: deps.features,
    repos: deps.repos,
    store,
    clock: deps.clock,
    logger: deps.logger,
    recorder,
    failOpen: deps.config.limits_on_store_failure === 'open',
    defaultPrice: parseDefaultPrice(deps.config.default_model_price),
  });

  const resets = createResetWorker({
    db: deps.db,
    clock: deps.clock,
    logger: deps.logger,
    onReset: () => {
      service.invalidate();
      deps.onBudgetsReset?.();
    },
  });
  resets.start(30_000);

  return {
    service,
    store,
    async flush() {
      await recorder.flush();
      await memory?.flush();
    },
    resets,
    async close() {
      await resets.stop();
      await recorder.flush();
      await store.close();
    },
  };
}
