import type { Db } from '../../storage/database.js';
import { USER_METADATA_KEY } from './metadata-keys.js';
import { createStatementRunner, logConditions, type RowFilter } from './reader.js';

const HIT = `cache_status IN ('HIT', 'SEMANTIC_HIT')`;

export interface UserCounts {
  /** Distinct users. */
  users: number;
  /** Requests that named a user. */
  requests: number;
}

export interface MetadataGroup {
  value: string;
  requests: number;
  cost: number;
  tokenSum: number;
  tokenRows: number;
  last: string;
  /** Requests whose trace has feedback, and the sums behind its weighted average. */
  withFeedback: number;
  feedbackWeighted: number;
  feedbackWeights: number;
}

export interface CacheLatency {
  hits: number;
  hitLatencySum: number;
  requests: number;
  missLatencySum: number;
}

/** What the cache hits of a bucket saved, US dollars, by kind of hit. */
export interface CacheSavings {
  simple: number;
  semantic: number;
}

/** A request that succeeded after more than one attempt: when, and what was tried. */
export interface RescuedRow {
  createdAt: string;
  attempts: Array<{ target: string }>;
}

const num = (value: unknown) => Number(value ?? 0);

/**
 * Analytics that rollups cannot answer, read from request_logs rows (so they reach back
 * LOG_RETENTION_DISPLAY days): distinct users, values of a metadata key, the latency of cache
 * hits, requests rescued by retries and fallbacks. Each is one statement over the window,
 * through the organisation-and-time indexes.
 */
export function createLogAnalytics(db: Db) {
  const { dialect, run } = createStatementRunner(db);
  const bucket = (interval: number) => dialect.epochBucket('created_at', interval / 1000);
  /** Over the whole window there is one group: an aggregate without GROUP BY (which returns its row even over no rows). */
  const grouped = (interval: number | null) => (interval === null ? '' : ' GROUP BY g');

  /** Conditions of the filter, plus the rows that carry `key` in their metadata. */
  function withKey(filter: RowFilter, key: string, params: unknown[]) {
    const conditions = logConditions(filter, filter.from, filter.to, params, dialect);
    if (!conditions.includes('metadata IS NOT NULL')) conditions.push('metadata IS NOT NULL');
    return conditions;
  }

  /** Distinct users and their requests, over the window (`interval` null) or per bucket (key: ms / interval). */
  async function users(filter: RowFilter, interval: number | null): Promise<Map<number, UserCounts>> {
    const params: unknown[] = [USER_METADATA_KEY];
    const conditions = withKey(filter, USER_METADATA_KEY, params);
    const group = interval === null ? '0' : bucket(interval);
    const rows = await run(
      `SELECT ${interval === null ? '0' : 'g'} AS g, count(DISTINCT u) AS users, count(*) AS requests FROM (
        SELECT ${group} AS g, ${dialect.metadataValue} AS u
        FROM request_logs${dialect.metadataIndex} WHERE ${conditions.join(' AND ')}
      ) named WHERE u IS NOT NULL${grouped(interval)}`,
      params,
    );
    return new Map(rows.map((r) => [num(r[0]), { users: num(r[1]), requests: num(r[2]) }]));
  }

  /**
   * Requests, cost, tokens, last request and feedback per value of one metadata key (rows without
   * it left out). A request has feedback when its trace has, in its workspace.
   */
  async function byMetadata(filter: RowFilter, key: string): Promise<MetadataGroup[]> {
    const params: unknown[] = [key, filter.organisationId];
    const conditions = withKey(filter, key, params);
    const rows = await run(
      `SELECT v, count(*) AS requests, coalesce(sum(cost), 0) AS cost, coalesce(sum(total_tokens), 0) AS tokens,
        count(total_tokens) AS token_rows, max(created_at) AS last_seen, count(vw) AS with_feedback,
        coalesce(sum(vw), 0) AS weighted, coalesce(sum(w), 0) AS weights FROM (
        SELECT ${dialect.metadataValue} AS v, cost, total_tokens, created_at, fb.vw AS vw, fb.w AS w
        FROM request_logs${dialect.metadataIndex}
        LEFT JOIN (
          SELECT workspace_id AS fb_workspace, trace_id AS fb_trace, sum(value * weight) AS vw, sum(weight) AS w
          FROM feedback WHERE organisation_id = ? GROUP BY workspace_id, trace_id
        ) fb ON fb.fb_trace = request_logs.trace_id AND fb.fb_workspace = request_logs.workspace_id
        WHERE ${conditions.join(' AND ')}
      ) named WHERE v IS NOT NULL GROUP BY v`,
      params,
    );
    return rows.map((r) => ({
      value: String(r[0]),
      requests: num(r[1]),
      cost: num(r[2]),
      tokenSum: num(r[3]),
      tokenRows: num(r[4]),
      last: String(r[5]),
      withFeedback: num(r[6]),
      feedbackWeighted: num(r[7]),
      feedbackWeights: num(r[8]),
    }));
  }

  /** Latency sums of cache hits and of the other requests, over the window or per bucket. */
  async function cacheLatency(filter: RowFilter, interval: number | null): Promise<Map<number, CacheLatency>> {
    const params: unknown[] = [];
    const conditions = logConditions(filter, filter.from, filter.to, params, dialect);
    const hit = `CASE WHEN ${HIT} THEN 1 ELSE 0 END`;
    const rows = await run(
      `SELECT ${interval === null ? '0' : bucket(interval)} AS g, sum(${hit}) AS hits,
        coalesce(sum(CASE WHEN ${HIT} THEN latency_ms ELSE 0 END), 0) AS hit_latency, count(*) AS requests,
        coalesce(sum(CASE WHEN ${HIT} THEN 0 ELSE latency_ms END), 0) AS miss_latency
      FROM request_logs WHERE ${conditions.join(' AND ')}${grouped(interval)}`,
      params,
    );
    return new Map(
      rows.map((r) => [
        num(r[0]),
        { hits: num(r[1]), hitLatencySum: num(r[2]), requests: num(r[3]), missLatencySum: num(r[4]) },
      ]),
    );
  }

  /** The savings recorded on cache hits (cache_savings), per bucket: simple (HIT) and semantic (SEMANTIC_HIT). */
  async function cacheSavings(filter: RowFilter, interval: number): Promise<Map<number, CacheSavings>> {
    const params: unknown[] = [];
    const conditions = logConditions(filter, filter.from, filter.to, params, dialect);
    const rows = await run(
      `SELECT ${bucket(interval)} AS g,
        coalesce(sum(CASE WHEN cache_status = 'HIT' THEN cache_savings ELSE 0 END), 0) AS simple,
        coalesce(sum(CASE WHEN cache_status = 'SEMANTIC_HIT' THEN cache_savings ELSE 0 END), 0) AS semantic
      FROM request_logs WHERE ${conditions.join(' AND ')} AND ${HIT} AND cache_savings IS NOT NULL GROUP BY g`,
      params,
    );
    return new Map(rows.map((r) => [num(r[0]), { simple: num(r[1]), semantic: num(r[2]) }]));
  }

  /** Successful requests that took more than one attempt, with their attempts. */
  async function rescued(filter: RowFilter): Promise<RescuedRow[]> {
    const params: unknown[] = [];
    const conditions = logConditions(filter, filter.from, filter.to, params, dialect);
    const rows = await run(
      `SELECT created_at, attempts FROM request_logs
      WHERE ${conditions.join(' AND ')} AND is_success <> 0 AND retry_count > 0 AND attempts IS NOT NULL`,
      params,
    );
    return rows.map((r) => ({ createdAt: String(r[0]), attempts: parseAttempts(r[1]) }));
  }

  return { users, byMetadata, cacheLatency, cacheSavings, rescued };
}

export type LogAnalytics = ReturnType<typeof createLogAnalytics>;

function parseAttempts(text: unknown): Array<{ target: string }> {
  try {
    const parsed: unknown = JSON.parse(String(text));
    if (!Array.isArray(parsed)) return [];
    return parsed.map((a: unknown) => {
      const target = (a as { target?: unknown } | null)?.target;
      return { target: typeof target === 'string' ? target : '' };
    });
  } catch {
    return [];
  }
}
