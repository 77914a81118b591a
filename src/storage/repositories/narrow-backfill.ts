import { CompiledQuery, sql } from 'kysely';
import type { Db } from '../database.js';
import { rawSqlite } from '../database.js';
import { outsideRequestTransactions } from '../request-transaction.js';
import {
  NARROW_ROLLUP_KEY,
  narrowFromRollups,
  registerHistogramFunctions,
  ROLLUP_PERIODS,
  rollupColumns,
  rollupValues,
} from './request-log-rollups.js';
import { ROLLUP_LOCK } from './request-logs-postgres.js';

/** Hours of period starts one step sums: a day (its hours, the day, and a week or four starting on it). */
export const NARROW_STEP_HOURS = 24;
/** Rows per INSERT (25 values each). */
const ROWS_PER_INSERT = 500;

const HOUR_MS = 3_600_000;

/**
 * Sets the hour from which narrow rows are whole, unless it is set: the second full hour after
 * `now`, as for a metadata key's `since_hour` (batches being written meanwhile, by any instance
 * whatever its clock says within the hour, may not have summed them). Every start runs it; the
 * first after migration 0035 sets it (instances starting together: one row, id 1).
 */
export async function markNarrowSince(db: Db, now: number): Promise<void> {
  await sql`INSERT INTO analytics_narrow_since (id, since_hour) VALUES (1, ${Math.floor(now / HOUR_MS) + 2}) ON CONFLICT (id) DO NOTHING`.execute(
    db,
  );
}

interface Query {
  text: string;
  params: unknown[];
}
type Row = Record<string, unknown>;

/**
 * One step of the narrow rollups' backfill (docs/analytics.md#narrow-rollups): the narrow rows of
 * the day of period starts before `analytics_narrow_since` that holds the newest older rollups
 * are made again from the full and metadata rollups, and the mark moves back to that day; with
 * no older hour, every start before the mark, and the mark moves to 0 (every narrow row whole). One transaction under the writer's rollup
 * lock (PostgreSQL's advisory lock; on SQLite, one synchronous immediate transaction), so no
 * batch is summed into either side meanwhile and a step cut short leaves the mark where it was.
 * Returns false when there was nothing left to do.
 */
export async function narrowBackfillStep(db: Db): Promise<boolean> {
  const root = outsideRequestTransactions(db);
  const sqlite = rawSqlite(db) ?? rawSqlite(root);
  if (sqlite) {
    registerHistogramFunctions(sqlite);
    const prepared = new Map<string, ReturnType<typeof sqlite.prepare>>();
    return sqlite
      .transaction(() =>
        drive((q) => {
          let statement = prepared.get(q.text);
          if (!statement) prepared.set(q.text, (statement = sqlite.prepare(q.text)));
          if (statement.reader) return statement.all(q.params) as Row[];
          statement.run(q.params);
          return [];
        }),
      )
      .immediate();
  }
  return root.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${ROLLUP_LOCK})`.execute(trx);
    const g = step();
    let next = g.next();
    while (!next.done) {
      let n = 0;
      const text = next.value.text.replace(/\?/g, () => `$${++n}`);
      const { rows } = await trx.executeQuery<Row>(CompiledQuery.raw(text, next.value.params));
      next = g.next(rows);
    }
    return next.value;
  });
}

/** Runs a step's statements synchronously. */
function drive(run: (q: Query) => Row[]): boolean {
  const g = step();
  let next = g.next();
  while (!next.done) next = g.next(run(next.value));
  return next.value;
}

/** The statements of one step, each answered with its rows (none for a write). */
function* step(): Generator<Query, boolean, Row[]> {
  const [mark] = yield { text: 'SELECT since_hour FROM analytics_narrow_since', params: [] };
  const since = Number(mark?.since_hour ?? 0);
  if (since <= 0) return false;
  const organisations = (yield { text: 'SELECT id FROM organisations', params: [] }).map((o) => o.id as string);
  let newest = -Infinity;
  for (const id of organisations) {
    const [row] = yield {
      text: 'SELECT max(period_start) AS newest FROM analytics_key_rollups WHERE organisation_id = ? AND period = 1 AND period_start < ?',
      params: [id, since],
    };
    if (row?.newest !== null && row?.newest !== undefined) newest = Math.max(newest, Number(row.newest));
  }
  // With no older hour left, the last step takes every start before the mark: weeks and four
  // weeks that began before the first request.
  const from = newest === -Infinity ? 0 : Math.floor(newest / NARROW_STEP_HOURS) * NARROW_STEP_HOURS;
  const keys = yield { text: 'SELECT metadata_key, since_hour FROM analytics_metadata_keys', params: [] };
  for (const id of organisations) {
    yield {
      text: 'DELETE FROM analytics_narrow_rollups WHERE organisation_id = ? AND period_start >= ? AND period_start < ?',
      params: [id, from, since],
    };
    for (const period of ROLLUP_PERIODS) {
      const full = yield {
        text: 'SELECT * FROM analytics_rollups WHERE organisation_id = ? AND period = ? AND period_start >= ? AND period_start < ?',
        params: [id, period, from, since],
      };
      yield* insertNarrow(narrowFromRollups(full, false, period));
      for (const key of keys) {
        // Before the key's first whole hour its rollups are partial, and never read.
        const start = Math.max(from, Number(key.since_hour));
        if (start >= since) continue;
        const pairs = yield {
          text: 'SELECT * FROM analytics_metadata_rollups WHERE organisation_id = ? AND metadata_key = ? AND period = ? AND period_start >= ? AND period_start < ?',
          params: [id, key.metadata_key, period, start, since],
        };
        yield* insertNarrow(narrowFromRollups(pairs, true, period));
      }
    }
  }
  yield { text: 'UPDATE analytics_narrow_since SET since_hour = ?', params: [from] };
  return true;
}

function* insertNarrow(narrow: ReturnType<typeof narrowFromRollups>): Generator<Query, void, Row[]> {
  const columns = rollupColumns(NARROW_ROLLUP_KEY);
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  for (let at = 0; at < narrow.length; at += ROWS_PER_INSERT) {
    const chunk = narrow.slice(at, at + ROWS_PER_INSERT);
    yield {
      text: `INSERT INTO analytics_narrow_rollups (${columns.join(', ')}) VALUES ${chunk.map(() => tuple).join(', ')}`,
      params: chunk.flatMap(rollupValues),
    };
  }
}
