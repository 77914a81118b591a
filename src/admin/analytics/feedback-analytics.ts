import type { Db } from '../../storage/database.js';
import {
  createStatementRunner,
  dimensionConditions,
  metadataConditions,
  readsRows,
  requestConditions,
  type RowFilter,
} from './reader.js';

/** Feedback of a group: how many, and the sums behind the weighted average Σ value·weight / Σ weight. */
export interface FeedbackTotals {
  total: number;
  weightedSum: number;
  weightSum: number;
}

const num = (value: unknown) => Number(value ?? 0);
const totalsOf = (r: readonly unknown[]): FeedbackTotals => ({
  total: num(r[1]),
  weightedSum: num(r[2]),
  weightSum: num(r[3]),
});

/** Whether the filter says anything about the requests (rather than only the organisation, workspace and window). */
const filtersRequests = (filter: RowFilter) =>
  filter.apiKeyId !== undefined ||
  filter.visibleKeyIds !== null ||
  filter.provider !== undefined ||
  filter.model !== undefined ||
  (filter.statusCodes?.length ?? 0) > 0 ||
  filter.guardrailVerdict !== undefined ||
  readsRows(filter);

/**
 * The feedback graphs: feedback given in the window (feedback.created_at), in the filter's
 * workspace. Filters on requests (API key, provider, model, status, metadata, and data
 * visibility) keep the feedback whose trace holds a request that matches them, as feedback is
 * about a trace.
 */
export function createFeedbackAnalytics(db: Db) {
  const { dialect, run } = createStatementRunner(db);

  function conditions(filter: RowFilter, params: unknown[]): string[] {
    params.push(filter.organisationId, new Date(filter.from).toISOString(), new Date(filter.to).toISOString());
    const out = ['f.organisation_id = ?', 'f.created_at >= ?', 'f.created_at <= ?'];
    if (filter.workspaceId !== undefined) {
      out.push('f.workspace_id = ?');
      params.push(filter.workspaceId);
    }
    if (filtersRequests(filter)) {
      // Unqualified names inside resolve to request_logs, the innermost table.
      const inner = [
        ...dimensionConditions(filter, params, dialect),
        ...metadataConditions(filter, params, dialect),
        ...requestConditions(filter, params),
      ];
      out.push(
        `EXISTS (SELECT 1 FROM request_logs WHERE request_logs.trace_id = f.trace_id AND request_logs.organisation_id = f.organisation_id AND ${inner.join(' AND ')})`,
      );
    }
    return out;
  }

  /** Over the window (`interval` null: key 0) or per bucket (key: ms / interval). */
  async function byTime(filter: RowFilter, interval: number | null): Promise<Map<number, FeedbackTotals>> {
    const params: unknown[] = [];
    const where = conditions(filter, params);
    const group = interval === null ? '0' : dialect.epochBucket('f.created_at', interval / 1000);
    const rows = await run(
      `SELECT ${group} AS g, count(*) AS total, coalesce(sum(f.value * f.weight), 0) AS weighted, coalesce(sum(f.weight), 0) AS weights
      FROM feedback f WHERE ${where.join(' AND ')}${interval === null ? '' : ' GROUP BY g'}`,
      params,
    );
    return new Map(rows.map((r) => [num(r[0]), totalsOf(r)]));
  }

  /** How many feedbacks gave each score (−10 to 10). */
  async function byScore(filter: RowFilter): Promise<Map<number, FeedbackTotals>> {
    const params: unknown[] = [];
    const where = conditions(filter, params);
    const rows = await run(
      `SELECT f.value AS g, count(*) AS total, coalesce(sum(f.value * f.weight), 0) AS weighted, coalesce(sum(f.weight), 0) AS weights
      FROM feedback f WHERE ${where.join(' AND ')} GROUP BY f.value`,
      params,
    );
    return new Map(rows.map((r) => [num(r[0]), totalsOf(r)]));
  }

  /** Feedback per model of its trace's requests: a feedback counts once for each model its trace used. */
  async function byModel(filter: RowFilter): Promise<Map<string, FeedbackTotals>> {
    const params: unknown[] = [];
    const where = conditions(filter, params);
    const rows = await run(
      `SELECT model AS g, count(*) AS total, coalesce(sum(vw), 0) AS weighted, coalesce(sum(w), 0) AS weights FROM (
        SELECT DISTINCT f.id AS id, r.model AS model, f.value * f.weight AS vw, f.weight AS w
        FROM feedback f JOIN request_logs r ON r.trace_id = f.trace_id AND r.organisation_id = f.organisation_id
        WHERE ${where.join(' AND ')} AND r.model IS NOT NULL
      ) pairs GROUP BY model`,
      params,
    );
    return new Map(rows.map((r) => [String(r[0]), totalsOf(r)]));
  }

  return { byTime, byScore, byModel };
}

export type FeedbackAnalytics = ReturnType<typeof createFeedbackAnalytics>;
