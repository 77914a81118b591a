import type SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { rawSqlite, type Db } from '../database.js';
import { noteRawWrite } from '../request-transaction.js';
import { insertBatchPostgres } from './request-logs-postgres.js';
import {
  COLUMNS,
  FULL_ROLLUP_DIMENSIONS,
  MEASURES,
  METADATA_ROLLUP_DIMENSIONS,
  NARROW_ROLLUP_KEY,
  registerHistogramFunctions,
  rollupValues,
  sumBatch,
  sumMetadataBatch,
  type RequestLogInsert,
} from './request-log-rollups.js';

export * from './request-log-rollups.js';

/**
 * `GET /v1/logs` counts at most this many matching rows (or one past the end of the asked page,
 * if further): past it, `total` is the bound and `total_is_lower_bound` true.
 */
export const LOG_TOTAL_BOUND = 10_000;

export interface RequestLogFilter {
  organisationId: string;
  workspaceId?: string | undefined;
  apiKeyId?: string | undefined;
  provider?: string | undefined;
  model?: string | undefined;
  statusCode?: number | undefined;
  endpointType?: string | undefined;
  traceId?: string | undefined;
  startTime?: string | undefined;
  endTime?: string | undefined;
  /** Only logs of the API keys of this user (data visibility off for members and managers); '' matches no key. */
  ownerUserId?: string | undefined;
  limit: number;
  offset: number;
}

function upsertSql(table: string, dims: readonly string[]): string {
  const columns = [
    'organisation_id',
    'period',
    'period_start',
    ...dims,
    ...MEASURES,
    'latency_min',
    'latency_max',
    'latency_hist',
    'first_seen',
    'last_seen',
  ];
  return `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})
    ON CONFLICT (organisation_id, period, period_start, ${dims.join(', ')}) DO UPDATE SET
    ${MEASURES.map((m) => `${m} = ${m} + excluded.${m}`).join(', ')},
    latency_min = min(latency_min, excluded.latency_min), latency_max = max(latency_max, excluded.latency_max),
    latency_hist = svcgw_hist_merge(latency_hist, excluded.latency_hist),
    first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen)`;
}

/**
 * One INSERT prepared once and run per row, then one upsert per rollup key, all in one
 * transaction: the rollups are exactly the sums of the rows, whichever process wrote them
 * (SQLite runs one write transaction at a time on the file).
 */
function preparedBatchInsert(sqlite: SQLite.Database): (rows: RequestLogInsert[]) => void {
  registerHistogramFunctions(sqlite);
  const insert = sqlite.prepare(
    `INSERT INTO request_logs (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`,
  );
  const upsertFull = sqlite.prepare(upsertSql('analytics_rollups', FULL_ROLLUP_DIMENSIONS));
  const upsertKey = sqlite.prepare(upsertSql('analytics_key_rollups', ['workspace_id', 'api_key_id']));
  const upsertMetadata = sqlite.prepare(upsertSql('analytics_metadata_rollups', METADATA_ROLLUP_DIMENSIONS));
  const upsertNarrow = sqlite.prepare(upsertSql('analytics_narrow_rollups', NARROW_ROLLUP_KEY));
  // Read in every batch's transaction: the database, not this instance's settings, says which
  // keys are summed, so that every instance sums the same ones.
  const metadataKeys = sqlite.prepare('SELECT metadata_key FROM analytics_metadata_keys').pluck();
  return sqlite.transaction((rows: RequestLogInsert[]) => {
    for (const row of rows) insert.run(COLUMNS.map((column) => row[column] ?? null));
    const [full, byKey, narrow] = sumBatch(rows);
    for (const s of full.values()) upsertFull.run(rollupValues(s));
    for (const s of byKey.values()) upsertKey.run(rollupValues(s));
    for (const s of narrow.values()) upsertNarrow.run(rollupValues(s));
    const [byMetadata, narrowMetadata] = sumMetadataBatch(rows, metadataKeys.all() as string[]);
    for (const s of byMetadata.values()) upsertMetadata.run(rollupValues(s));
    for (const s of narrowMetadata.values()) upsertNarrow.run(rollupValues(s));
  });
}

export function createRequestLogRepository(db: Db) {
  const sqlite = rawSqlite(db);
  let write: ((rows: RequestLogInsert[]) => void) | null = null;
  return {
    /** Writes a batch and adds it to the analytics rollups, in one transaction: one fsync for many requests. */
    insertBatch: async (rows: RequestLogInsert[]): Promise<void> => {
      if (rows.length === 0) return;
      if (!sqlite) return insertBatchPostgres(db, rows);
      write ??= preparedBatchInsert(sqlite);
      const insert = write;
      insert(rows);
      // Written inside an admin request's open transaction: written again if that is undone.
      noteRawWrite(sqlite, () => insert(rows));
    },

    findById: (organisationId: string, id: string) =>
      db
        .selectFrom('request_logs')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('id', '=', id)
        .executeTakeFirst(),

    list: async (filter: RequestLogFilter) => {
      let query = db.selectFrom('request_logs').where('organisation_id', '=', filter.organisationId);
      if (filter.workspaceId) query = query.where('workspace_id', '=', filter.workspaceId);
      if (filter.apiKeyId) query = query.where('api_key_id', '=', filter.apiKeyId);
      if (filter.provider) query = query.where('provider', '=', filter.provider);
      if (filter.model) query = query.where('model', '=', filter.model);
      if (filter.statusCode !== undefined) query = query.where('status_code', '=', filter.statusCode);
      if (filter.endpointType) query = query.where('endpoint_type', '=', filter.endpointType);
      if (filter.traceId) query = query.where('trace_id', '=', filter.traceId);
      if (filter.startTime) query = query.where('created_at', '>=', filter.startTime);
      if (filter.endTime) query = query.where('created_at', '<=', filter.endTime);
      // '' (a caller limited to its own keys that has no user) must match nothing, not everything.
      if (filter.ownerUserId !== undefined) {
        query = query.where(
          'api_key_id',
          'in',
          db
            .selectFrom('api_keys')
            .select('id')
            .where('organisation_id', '=', filter.organisationId)
            .where('user_id', '=', filter.ownerUserId),
        );
      }
      // Counting every match of a filter reads millions of rows: count at most a bound, and say so.
      // One past the asked page at least: a client paging until `total` pages on while rows remain.
      const bound = Math.max(LOG_TOTAL_BOUND, filter.offset + filter.limit + 1);
      const { total } = await db
        .selectFrom(
          query
            .select(sql.lit(1).as('one'))
            .limit(bound + 1)
            .as('matching'),
        )
        .select((eb) => eb.fn.countAll<number>().as('total'))
        .executeTakeFirstOrThrow();
      // Newest first in the order of the (organisation_id, created_at) index, seq breaking ties.
      const rows = await query
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('seq', 'desc')
        .limit(filter.limit)
        .offset(filter.offset)
        .execute();
      const counted = Number(total);
      return { total: Math.min(counted, bound), totalIsLowerBound: counted > bound, rows };
    },
  };
}

export type RequestLogRepository = ReturnType<typeof createRequestLogRepository>;
