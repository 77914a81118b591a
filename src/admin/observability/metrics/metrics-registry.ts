import type { RequestLogInsert } from '../../../storage/repositories/request-logs.js';
import { family as familyLines, labels, num } from './exposition.js';

/** Latency buckets, in seconds: from a cached answer to a long generation. */
export const LATENCY_BUCKETS_S = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120] as const;
/**
 * Distinct provider × model × status class series kept; past it new combinations count under
 * provider and model `other`, so that a client inventing model names cannot grow the output.
 */
export const MAX_SERIES = 1000;

interface Series {
  provider: string;
  model: string;
  statusClass: string;
  requests: number;
  errors: number;
  buckets: number[];
  latencySum: number;
  promptTokens: number;
  completionTokens: number;
  cost: number;
  cacheHits: number;
}

const LIMIT_KINDS: Readonly<Record<string, string>> = { RATE_LIMITED: 'rate', USAGE_LIMIT_EXCEEDED: 'budget' };

export const statusClass = (status: number): string => `${Math.min(Math.max(Math.floor(status / 100), 1), 5)}xx`;
export const isCacheHit = (cacheStatus: string): boolean => /HIT/i.test(cacheStatus);

/**
 * Counters of this instance's gateway requests since it started, fed by the request-log
 * writer's live records, rendered in the Prometheus text exposition format (version 0.0.4).
 */
export function createMetricsRegistry() {
  const series = new Map<string, Series>();
  const limitRejections = new Map<string, number>();

  function seriesFor(provider: string, model: string, cls: string): Series {
    let key = `${provider}\u0000${model}\u0000${cls}`;
    let found = series.get(key);
    if (found) return found;
    if (series.size >= MAX_SERIES) {
      provider = 'other';
      model = 'other';
      key = `${provider}\u0000${model}\u0000${cls}`;
      found = series.get(key);
      if (found) return found;
    }
    const created: Series = {
      provider,
      model,
      statusClass: cls,
      requests: 0,
      errors: 0,
      buckets: LATENCY_BUCKETS_S.map(() => 0),
      latencySum: 0,
      promptTokens: 0,
      completionTokens: 0,
      cost: 0,
      cacheHits: 0,
    };
    series.set(key, created);
    return created;
  }

  /**
   * Model names some provider (or the cache) has answered successfully. Others are a client's
   * word only (a typo, an invented name refused with a 400 or a provider's 404): they count under
   * `other`, so that they cannot fill the series with labels no dashboard asked for.
   */
  const answeredModels = new Set<string>();
  const modelLabel = (row: RequestLogInsert): string => {
    const model = row.model ?? null;
    if (model === null) return 'none';
    if (answeredModels.has(model)) return model;
    if (row.is_success !== 1 || answeredModels.size >= MAX_SERIES) return 'other';
    answeredModels.add(model);
    return model;
  };

  function record(row: RequestLogInsert): void {
    const s = seriesFor(row.provider ?? 'none', modelLabel(row), statusClass(row.status_code));
    const seconds = row.latency_ms / 1000;
    s.requests++;
    if (row.is_success !== 1) s.errors++;
    s.latencySum += seconds;
    LATENCY_BUCKETS_S.forEach((le, i) => {
      if (seconds <= le) s.buckets[i]!++;
    });
    s.promptTokens += row.prompt_tokens ?? 0;
    s.completionTokens += row.completion_tokens ?? 0;
    s.cost += row.cost ?? 0;
    if (isCacheHit(row.cache_status)) s.cacheHits++;
    const kind = row.error_code ? LIMIT_KINDS[row.error_code] : undefined;
    if (kind) limitRejections.set(kind, (limitRejections.get(kind) ?? 0) + 1);
  }

  function render(extra: { version: string }): string {
    const out: string[] = [];
    const family = (name: string, type: string, help: string, lines: string[]) => {
      out.push(...familyLines(name, type, help, lines));
    };
    const all = [...series.values()];
    const base = (s: Series) => ({ provider: s.provider, model: s.model, status_class: s.statusClass });
    /** Token, cost and cache figures do not depend on the status class: summed per provider × model. */
    const byModel = new Map<
      string,
      { provider: string; model: string; prompt: number; completion: number; cost: number; hits: number }
    >();
    for (const s of all) {
      const key = `${s.provider}\u0000${s.model}`;
      const m = byModel.get(key) ?? {
        provider: s.provider,
        model: s.model,
        prompt: 0,
        completion: 0,
        cost: 0,
        hits: 0,
      };
      m.prompt += s.promptTokens;
      m.completion += s.completionTokens;
      m.cost += s.cost;
      m.hits += s.cacheHits;
      byModel.set(key, m);
    }
    const models = [...byModel.values()];

    family('svcgw_build_info', 'gauge', 'The running svcgw version.', [
      `svcgw_build_info${labels({ version: extra.version })} 1`,
    ]);
    family(
      'svcgw_requests_total',
      'counter',
      'Gateway requests by provider, model and status class.',
      all.map((s) => `svcgw_requests_total${labels(base(s))} ${s.requests}`),
    );
    family(
      'svcgw_request_errors_total',
      'counter',
      'Gateway requests that failed (not a success status, or an error recorded).',
      all.map((s) => `svcgw_request_errors_total${labels(base(s))} ${s.errors}`),
    );
    family(
      'svcgw_request_duration_seconds',
      'histogram',
      'Gateway request latency, from arrival to the last byte of the answer.',
      all.flatMap((s) => [
        ...LATENCY_BUCKETS_S.map(
          (le, i) => `svcgw_request_duration_seconds_bucket${labels({ ...base(s), le: String(le) })} ${s.buckets[i]}`,
        ),
        `svcgw_request_duration_seconds_bucket${labels({ ...base(s), le: '+Inf' })} ${s.requests}`,
        `svcgw_request_duration_seconds_sum${labels(base(s))} ${num(s.latencySum)}`,
        `svcgw_request_duration_seconds_count${labels(base(s))} ${s.requests}`,
      ]),
    );
    family(
      'svcgw_tokens_total',
      'counter',
      'Tokens reported by providers, by provider, model and type (prompt or completion).',
      models.flatMap((m) => [
        `svcgw_tokens_total${labels({ provider: m.provider, model: m.model, type: 'prompt' })} ${m.prompt}`,
        `svcgw_tokens_total${labels({ provider: m.provider, model: m.model, type: 'completion' })} ${m.completion}`,
      ]),
    );
    family(
      'svcgw_cost_usd_total',
      'counter',
      'Cost of gateway requests in US dollars, where the price is known.',
      models.map((m) => `svcgw_cost_usd_total${labels({ provider: m.provider, model: m.model })} ${num(m.cost)}`),
    );
    family(
      'svcgw_cache_hits_total',
      'counter',
      'Requests answered from the cache.',
      models.map((m) => `svcgw_cache_hits_total${labels({ provider: m.provider, model: m.model })} ${m.hits}`),
    );
    family(
      'svcgw_limit_rejections_total',
      'counter',
      'Requests refused by a rate limit (429) or a spent budget (402).',
      ['rate', 'budget'].map(
        (kind) => `svcgw_limit_rejections_total${labels({ kind })} ${limitRejections.get(kind) ?? 0}`,
      ),
    );
    return `${out.join('\n')}\n`;
  }

  return {
    record,
    render,
    get seriesCount() {
      return series.size;
    },
  };
}

export type MetricsRegistry = ReturnType<typeof createMetricsRegistry>;
