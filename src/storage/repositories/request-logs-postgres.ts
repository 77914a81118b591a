import { CompiledQuery, sql } from 'kysely';
import type { Db } from '../database.js';
import { outsideRequestTransactions } from '../request-transaction.js';
import {
  COLUMNS,
  MEASURES,
  mergeHistograms,
  FULL_ROLLUP_DIMENSIONS,
  METADATA_ROLLUP_DIMENSIONS,
  NARROW_ROLLUP_KEY,
  rollupColumns,
  rollupValues,
  sumBatch,
  sumMetadataBatch,
  type RequestLogInsert,
  type RollupSums,
} from './request-log-rollups.js';

/** Rows per INSERT: PostgreSQL takes at most 65,535 parameters per statement. */
const ROWS_PER_INSERT = 1000;
/** Rollup keys per statement (up to 20 parameters each). */
const KEYS_PER_STATEMENT = 500;
/** Any number: the advisory lock under which instances add to the rollups one batch at a time. */
export const ROLLUP_LOCK = 7_310_452_119;

const TABLES = [
  { table: 'analytics_rollups', dims: FULL_ROLLUP_DIMENSIONS },
  { table: 'analytics_key_rollups', dims: ['workspace_id', 'api_key_id'] },
  { table: 'analytics_metadata_rollups', dims: METADATA_ROLLUP_DIMENSIONS },
  { table: 'analytics_narrow_rollups', dims: NARROW_ROLLUP_KEY },
] as const;

/**
 * A batch of request logs on PostgreSQL, in one transaction: multi-row INSERTs of the rows, then
 * the rollups. Additive measures are added by `ON CONFLICT DO UPDATE`; the latency histograms,
 * which PostgreSQL cannot merge, are merged here, under a transaction-level advisory lock that
 * makes the instances add to the rollups one batch at a time (as SQLite's single writer does),
 * so that no histogram is read by two writers at once. Runs outside any admin request's
 * transaction: a log never goes with an undone mutation.
 *
 * The statements are written as text with numbered parameters rather than built with kysely's
 * `sql` templates: compiling a template of 40,000 values cost more than running it (about
 * 100 ms a batch of 500), and this runs for every batch the gateway writes.
 */
export async function insertBatchPostgres(db: Db, rows: RequestLogInsert[]): Promise<void> {
  const [full, byKey, narrow] = sumBatch(rows);
  await outsideRequestTransactions(db)
    .transaction()
    .execute(async (trx) => {
      for (let at = 0; at < rows.length; at += ROWS_PER_INSERT) {
        const chunk = rows.slice(at, at + ROWS_PER_INSERT);
        await trx.executeQuery(
          insertValues(
            'request_logs',
            COLUMNS,
            chunk.map((row) => COLUMNS.map((column) => row[column] ?? null)),
          ),
        );
      }
      // The metadata keys to sum are read under the lock, in the same statement: the database,
      // not this instance's settings, says which keys are summed, so every instance sums the same.
      const { rows: locked } = await sql<{
        keys: string[] | null;
      }>`select pg_advisory_xact_lock(${ROLLUP_LOCK}), (select array_agg(metadata_key) from analytics_metadata_keys) as keys`.execute(
        trx,
      );
      const [byMetadata, narrowMetadata] = sumMetadataBatch(rows, locked[0]?.keys ?? []);
      for (const narrowPair of narrowMetadata) narrow.set(...narrowPair);
      for (const [{ table, dims }, sums] of [
        [TABLES[0], full],
        [TABLES[1], byKey],
        [TABLES[2], byMetadata],
        [TABLES[3], narrow],
      ] as const) {
        const all = [...sums.values()];
        for (let at = 0; at < all.length; at += KEYS_PER_STATEMENT) {
          await addToRollups(trx, table, dims, all.slice(at, at + KEYS_PER_STATEMENT));
        }
      }
    });
}

/** `($1, $2), ($3, $4)…` for `rows` of `width` values, numbered from `$1`. */
function placeholders(rows: number, width: number): string {
  const tuples: string[] = new Array<string>(rows);
  for (let r = 0, n = 1; r < rows; r++) {
    const slots: string[] = new Array<string>(width);
    for (let c = 0; c < width; c++) slots[c] = `$${n++}`;
    tuples[r] = `(${slots.join(',')})`;
  }
  return tuples.join(',');
}

const quoted = (columns: readonly string[]) => columns.map((c) => `"${c}"`).join(',');

function insertValues(table: string, columns: readonly string[], rows: unknown[][], suffix = ''): CompiledQuery {
  return CompiledQuery.raw(
    `insert into "${table}" (${quoted(columns)}) values ${placeholders(rows.length, columns.length)}${suffix}`,
    rows.flat(),
  );
}

async function addToRollups(db: Db, table: string, dims: readonly string[], sums: RollupSums[]): Promise<void> {
  const keyColumns = ['organisation_id', 'period', 'period_start', ...dims];
  const keyOf = (values: readonly unknown[]) => JSON.stringify(values.slice(0, keyColumns.length));
  const keyList = quoted(keyColumns);
  const { rows: stored } = await db.executeQuery<{ key: unknown[]; latency_hist: Buffer }>(
    CompiledQuery.raw(
      `select json_build_array(${keyList}) as key, latency_hist from "${table}" where (${keyList}) in (${placeholders(sums.length, keyColumns.length)})`,
      sums.flatMap((s) => s.dims),
    ),
  );
  const histograms = new Map(stored.map((row) => [JSON.stringify(row.key), row.latency_hist]));

  const columns = rollupColumns(dims);
  const histogramAt = columns.indexOf('latency_hist');
  const values = sums.map((s) => {
    const row = rollupValues(s);
    const previous = histograms.get(keyOf(row));
    if (previous) row[histogramAt] = mergeHistograms(previous, row[histogramAt] as Buffer);
    return row;
  });
  const updates = [
    ...MEASURES.map((m) => `"${m}" = "${table}"."${m}" + excluded."${m}"`),
    `latency_min = least("${table}".latency_min, excluded.latency_min)`,
    `latency_max = greatest("${table}".latency_max, excluded.latency_max)`,
    'latency_hist = excluded.latency_hist',
    `first_seen = least("${table}".first_seen, excluded.first_seen)`,
    `last_seen = greatest("${table}".last_seen, excluded.last_seen)`,
  ];
  await db.executeQuery(
    insertValues(table, columns, values, ` on conflict (${keyList}) do update set ${updates.join(', ')}`),
  );
}
