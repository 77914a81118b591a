import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../database.js';
import { outsideRequestTransactions } from '../request-transaction.js';
import {
  addHistogram,
  COLUMNS,
  encodeHistogram,
  LATENCY_BUCKETS,
  MEASURES,
  rollupColumns,
  rollupValues,
  ROLLUP_TEXT_DIMENSIONS,
  sumBatch,
  type RequestLogInsert,
  type RollupSums,
} from './request-log-rollups.js';

/** Rows per INSERT: PostgreSQL takes at most 65,535 parameters per statement. */
const ROWS_PER_INSERT = 1000;
/** Rollup keys per statement (up to 20 parameters each). */
const KEYS_PER_STATEMENT = 500;
/** Any number: the advisory lock under which instances add to the rollups one batch at a time. */
const ROLLUP_LOCK = 7_310_452_119;

const TABLES = [
  { table: 'analytics_rollups', dims: [...ROLLUP_TEXT_DIMENSIONS, 'status_code', 'guardrail_verdict'] },
  { table: 'analytics_key_rollups', dims: ['workspace_id', 'api_key_id'] },
] as const;

/**
 * A batch of request logs on PostgreSQL, in one transaction: multi-row INSERTs of the rows, then
 * the rollups. Additive measures are added by `ON CONFLICT DO UPDATE`; the latency histograms,
 * which PostgreSQL cannot merge, are merged here, under a transaction-level advisory lock that
 * makes the instances add to the rollups one batch at a time (as SQLite's single writer does),
 * so that no histogram is read by two writers at once. Runs outside any admin request's
 * transaction: a log never goes with an undone mutation.
 */
export async function insertBatchPostgres(db: Db, rows: RequestLogInsert[]): Promise<void> {
  const [full, byKey] = sumBatch(rows);
  await outsideRequestTransactions(db)
    .transaction()
    .execute(async (trx) => {
      for (let at = 0; at < rows.length; at += ROWS_PER_INSERT) {
        const values = rows
          .slice(at, at + ROWS_PER_INSERT)
          .map((row) => sql`(${sql.join(COLUMNS.map((column) => row[column] ?? null))})`);
        await sql`insert into request_logs (${sql.join(COLUMNS.map((c) => sql.ref(c)))}) values ${sql.join(values)}`.execute(
          trx,
        );
      }
      await sql`select pg_advisory_xact_lock(${ROLLUP_LOCK})`.execute(trx);
      for (const [{ table, dims }, sums] of [
        [TABLES[0], full],
        [TABLES[1], byKey],
      ] as const) {
        const all = [...sums.values()];
        for (let at = 0; at < all.length; at += KEYS_PER_STATEMENT) {
          await addToRollups(trx, table, dims, all.slice(at, at + KEYS_PER_STATEMENT));
        }
      }
    });
}

async function addToRollups(db: Db, table: string, dims: readonly string[], sums: RollupSums[]): Promise<void> {
  const keyColumns = ['organisation_id', 'period', 'period_start', ...dims];
  const keyOf = (values: readonly unknown[]) => JSON.stringify(values.slice(0, keyColumns.length));
  const tuple = (values: readonly unknown[]): RawBuilder<unknown> => sql`(${sql.join(values)})`;
  const keyList = sql.join(keyColumns.map((c) => sql.ref(c)));
  const { rows: stored } = await sql<{ key: unknown[]; latency_hist: Buffer }>`
    select json_build_array(${keyList}) as key, latency_hist from ${sql.table(table)}
    where (${keyList}) in (${sql.join(sums.map((s) => tuple(s.dims)))})`.execute(db);
  const histograms = new Map(stored.map((row) => [JSON.stringify(row.key), row.latency_hist]));

  const columns = rollupColumns(dims);
  const histogramAt = columns.indexOf('latency_hist');
  const values = sums.map((s) => {
    const row = rollupValues(s);
    const previous = histograms.get(keyOf(row));
    if (previous) {
      const dense = new Float64Array(LATENCY_BUCKETS);
      addHistogram(dense, previous);
      addHistogram(dense, row[histogramAt] as Buffer);
      row[histogramAt] = encodeHistogram(dense);
    }
    return tuple(row);
  });
  const current = (column: string) => sql.ref(`${table}.${column}`);
  const excluded = (column: string) => sql.ref(`excluded.${column}`);
  const updates = [
    ...MEASURES.map((m) => sql`${sql.ref(m)} = ${current(m)} + ${excluded(m)}`),
    sql`latency_min = least(${current('latency_min')}, ${excluded('latency_min')})`,
    sql`latency_max = greatest(${current('latency_max')}, ${excluded('latency_max')})`,
    sql`latency_hist = ${excluded('latency_hist')}`,
    sql`first_seen = least(${current('first_seen')}, ${excluded('first_seen')})`,
    sql`last_seen = greatest(${current('last_seen')}, ${excluded('last_seen')})`,
  ];
  await sql`insert into ${sql.table(table)} (${sql.join(columns.map((c) => sql.ref(c)))}) values ${sql.join(values)}
    on conflict (${keyList}) do update set ${sql.join(updates)}`.execute(db);
}
