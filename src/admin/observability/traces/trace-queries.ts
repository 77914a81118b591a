import { sql } from 'kysely';
import { engineOf, type Db } from '../../../storage/database.js';
import type { RequestLogsTable } from '../../../storage/schema.js';
import type { Selectable } from 'kysely';

export interface TraceScope {
  organisationId: string;
  /** Only requests of this workspace (always set for workspace keys). */
  workspaceId?: string | undefined;
  /** Only requests made with the keys of this user (data visibility off). */
  ownerUserId?: string | undefined;
}

export interface TraceListFilter extends TraceScope {
  startTime?: string | undefined;
  endTime?: string | undefined;
  limit: number;
  offset: number;
}

/** A trace holds at most this many spans in one answer; longer traces are cut, and say so. */
export const MAX_SPANS = 5000;

/** Milliseconds since the epoch of an ISO `created_at`, in SQL. */
const epochMs = (db: Db) =>
  engineOf(db) === 'postgres'
    ? sql<number>`extract(epoch FROM created_at::timestamptz) * 1000.0`
    : sql<number>`unixepoch(created_at, 'subsec') * 1000.0`;

function scoped(db: Db, scope: TraceScope) {
  let query = db.selectFrom('request_logs').where('organisation_id', '=', scope.organisationId);
  if (scope.workspaceId) query = query.where('workspace_id', '=', scope.workspaceId);
  if (scope.ownerUserId) {
    query = query.where(
      'api_key_id',
      'in',
      db
        .selectFrom('api_keys')
        .select('id')
        .where('organisation_id', '=', scope.organisationId)
        .where('user_id', '=', scope.ownerUserId),
    );
  }
  return query;
}

/**
 * Traces, newest activity first: the requests that share a trace id, summed. A trace is listed
 * when one of its requests falls in the time range, and its figures cover those requests.
 */
export async function listTraces(db: Db, filter: TraceListFilter) {
  let query = scoped(db, filter);
  if (filter.startTime) query = query.where('created_at', '>=', filter.startTime);
  if (filter.endTime) query = query.where('created_at', '<=', filter.endTime);
  const { total } = await query.select(sql<number>`count(distinct trace_id)`.as('total')).executeTakeFirstOrThrow();
  const rows = await query
    .select([
      'trace_id',
      sql<string>`min(created_at)`.as('started_at'),
      sql<number>`max(${epochMs(db)} + latency_ms) - min(${epochMs(db)})`.as('duration_ms'),
      sql<number>`count(*)`.as('requests'),
      sql<number>`sum(case when is_success = 0 then 1 else 0 end)`.as('errors'),
      sql<number | null>`sum(cost)`.as('cost'),
      sql<number | null>`sum(total_tokens)`.as('total_tokens'),
      sql<string>`min(workspace_id)`.as('workspace_id'),
      sql<string | null>`max(case when parent_span_id is null then span_name end)`.as('name'),
      sql<number>`max(seq)`.as('last_seq'),
    ])
    .groupBy('trace_id')
    .orderBy('last_seq', 'desc')
    .limit(filter.limit)
    .offset(filter.offset)
    .execute();
  return { total: Number(total), rows };
}

export type TraceSpanRow = Selectable<RequestLogsTable>;

/** Every request of one trace the caller may see, in the order they started. */
export function traceRequests(db: Db, scope: TraceScope, traceId: string): Promise<TraceSpanRow[]> {
  return scoped(db, scope)
    .selectAll()
    .where('trace_id', '=', traceId)
    .orderBy('created_at')
    .orderBy('seq')
    .limit(MAX_SPANS + 1)
    .execute();
}
