import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import { Agent, request } from 'undici';
import { PACKAGE_ROOT } from '../src/lib/package-root.js';
import { parseRollupMetadataKeys, rollupMetadataKeysProblem } from '../src/config/rollup-metadata-keys.js';
import { DATABASE_FILE, engineOf, openDatabase, type Db } from '../src/storage/database.js';
import { createRequestLogRepository, type RequestLogInsert } from '../src/storage/repositories/request-logs.js';
import { createRetentionWorker } from '../src/admin/observability/retention/retention-worker.js';
import type { ExportFiles } from '../src/admin/observability/exports/export-files.js';
import { createLogger } from '../src/telemetry/logger.js';
import { hashKey, keyHint } from '../src/auth/api-key-service.js';
import {
  BENCH_MODELS,
  BENCH_SOURCES,
  buildMetadataRollupsFromLogsFast,
  buildNarrowRollupsFromLogsFast,
  buildRollupsFromLogsFast,
  insertGeneratedRows,
  withoutIndexes,
} from './bench/postgres-rows.js';
import { killAllNow, startNode, stopAll } from './bench/processes.js';
import { seededRandom } from './bench/seeded-random.js';

/**
 * `npm run bench:analytics`: writes N generated request logs (default 1,000,000, spread over the
 * 90 days LOG_RETENTION_DISPLAY keeps) into the SQLite file of a real `svcgw serve`, through the
 * request-log repository's insertBatch in batches of 500 as the gateway's writer does (so the
 * rollups are maintained as in production), then times every analytics endpoint over the whole
 * 90 days. With `--database-url postgres://…/db` the server runs on PostgreSQL instead, on a
 * fresh database made next to `db` (dropped at the end), and the rows go through the PostgreSQL
 * repository's insertBatch, or (`--generate sql`, the default on PostgreSQL) are made by the
 * server with the same distribution and the rollups built from them in SQL
 * (scripts/bench/postgres-rows.ts). On PostgreSQL it then also times `GET /v1/logs` with its
 * filters and, last, a retention run deleting the oldest third of the rows in bounded batches.
 *
 *   node dist/scripts/bench-analytics.js [--rows 1000000] [--runs 5] [--database-url URL] [--generate sql|repository]
 *     [--keep-database NAME | --reuse-database NAME] [--only TEXT] [--metadata-keys LIST]
 *
 * To work on queries, generate once and time again and again: `--keep-database NAME` makes the
 * PostgreSQL database NAME, fills it and leaves it (no retention run, which would delete rows);
 * `--reuse-database NAME` starts the gateway on it as it is (its migrations run) and only times
 * the queries. `--only TEXT` times only the cases whose name contains TEXT.
 *
 * The server sums the metadata keys `env` and `team` and their combination `env+team`
 * (ANALYTICS_ROLLUP_METADATA_KEYS): the metadata filters on one of the keys, and on a pair of
 * each, read `analytics_metadata_rollups`, built in SQL with the other rollups (or, on a reused
 * database without them, before the timings). `--metadata-keys LIST` sums another list (`env,team`:
 * the filter on two pairs reads request_logs). `--sqlite-cache-mb N` gives the server another
 * SQLite page cache (SQLITE_CACHE_MB) than its default.
 */
const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '5' },
    'database-url': { type: 'string' },
    generate: { type: 'string' },
    'keep-database': { type: 'string' },
    'reuse-database': { type: 'string' },
    only: { type: 'string' },
    'metadata-keys': { type: 'string', default: 'env,team,env+team' },
    'sqlite-cache-mb': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  process.stdout.write(
    'usage: node dist/scripts/bench-analytics.js [--rows N] [--runs N] [--database-url postgres://…] [--generate sql|repository] [--keep-database NAME | --reuse-database NAME] [--only TEXT] [--metadata-keys LIST] [--sqlite-cache-mb N]\n',
  );
  process.exit(0);
}
const ROWS = Number(values.rows);
const RUNS = Number(values.runs);
if (!Number.isInteger(ROWS) || ROWS < 1 || !Number.isInteger(RUNS) || RUNS < 1) {
  process.stderr.write('bench-analytics: --rows and --runs take positive integers\n');
  process.exit(2);
}
const GENERATE = values.generate ?? (values['database-url'] ? 'sql' : 'repository');
if (GENERATE !== 'sql' && GENERATE !== 'repository') {
  process.stderr.write('bench-analytics: --generate takes sql or repository\n');
  process.exit(2);
}
if (GENERATE === 'sql' && !values['database-url']) {
  process.stderr.write('bench-analytics: --generate sql needs --database-url (PostgreSQL)\n');
  process.exit(2);
}
const KEEP = values['keep-database'];
const REUSE = values['reuse-database'];
for (const name of [KEEP, REUSE]) {
  if (name === undefined) continue;
  if (!values['database-url'] || !/^[a-z_][a-z0-9_]{0,62}$/.test(name) || (KEEP && REUSE)) {
    process.stderr.write(
      'bench-analytics: --keep-database or --reuse-database (one of them) takes a lower-case database name and needs --database-url\n',
    );
    process.exit(2);
  }
}
const DAY_MS = 86_400_000;
const TARGET_MS = 500;
const metadataKeysProblem = rollupMetadataKeysProblem(values['metadata-keys']);
if (metadataKeysProblem !== null) {
  process.stderr.write(`bench-analytics: --metadata-keys: ${metadataKeysProblem}\n`);
  process.exit(2);
}
/** The metadata keys (and combinations) of the generated rows summed in metadata rollups, by canonical name. */
const METADATA_KEYS = parseRollupMetadataKeys(values['metadata-keys']);
let dataDir: string | null = null;
/** The PostgreSQL database made for this run, dropped at the end. */
let postgres: { adminUrl: string; name: string; url: string } | null = null;

process.once('exit', () => {
  killAllNow();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(
    signal,
    () =>
      void stopAll()
        .then(() => dropPostgresDatabase())
        .catch(() => undefined)
        .finally(() => process.exit(130)),
  );

/** Skewed choice: the first items are picked far more often, as real keys and models are. */
const skewed = <T>(items: readonly T[], r: number): T =>
  items[Math.min(items.length - 1, Math.floor(items.length * r * r))]!;

const MODELS = BENCH_MODELS;
const SOURCES = BENCH_SOURCES;

/**
 * Batches of 500 rows through the repository's insertBatch, from this process's own connection
 * to the server's file: the rows and their rollups in one transaction per batch, as the gateway
 * writes them. Returns the time taken and the CPU time of this process per row.
 */
async function generate(
  db: Db,
  organisationId: string,
  workspaces: string[],
  now: number,
  keys: string[],
  configs: string[],
): Promise<{ ms: number; cpuUsPerRow: number }> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const repo = createRequestLogRepository(db);
  const next = seededRandom(42);
  const span = 89 * DAY_MS;
  const BATCH = 500;
  for (let from = 0; from < ROWS; from += BATCH) {
    const batch: RequestLogInsert[] = [];
    for (let i = from; i < Math.min(ROWS, from + BATCH); i++) {
      const [provider, model] = skewed(MODELS, next());
      const r = next();
      const status = r < 0.93 ? 200 : r < 0.96 ? 429 : r < 0.985 ? 500 : 400;
      const prompt = status === 200 ? 50 + Math.floor(next() * 2000) : null;
      const completion = status === 200 ? Math.floor(next() * 600) : null;
      const key = skewed(keys, next());
      const cache = next();
      batch.push({
        id: randomUUID(),
        trace_id: randomUUID(),
        request_id: randomUUID(),
        organisation_id: organisationId,
        workspace_id: workspaces[keys.indexOf(key) % workspaces.length]!,
        api_key_id: key,
        provider,
        credential_source: skewed(SOURCES, next()),
        model,
        endpoint_type: 'chatComplete',
        method: 'POST',
        path: '/v1/chat/completions',
        status_code: status,
        is_success: status === 200 ? 1 : 0,
        is_stream: 0,
        latency_ms: Math.exp(4 + next() * 3),
        ttfb_ms: null,
        prompt_tokens: prompt,
        completion_tokens: completion,
        cached_tokens: 0,
        total_tokens: prompt === null ? null : prompt + completion!,
        cost: prompt === null ? null : (prompt * 0.15 + completion! * 0.6) / 1e6,
        cost_currency: 'USD',
        cache_status: cache < 0.08 ? 'HIT' : cache < 0.1 ? 'SEMANTIC_HIT' : cache < 0.3 ? 'MISS' : 'DISABLED',
        metadata:
          next() < 0.5
            ? JSON.stringify({ env: next() < 0.7 ? 'prod' : 'dev', team: `team-${Math.floor(next() * 6)}` })
            : null,
        created_at: new Date(now - span + (i / ROWS) * span).toISOString(),
        config_id: next() < 0.3 ? skewed(configs, next()) : null,
        retry_count: 0,
      });
    }
    await repo.insertBatch(batch);
  }
  const used = process.cpuUsage(cpu);
  return { ms: performance.now() - started, cpuUsPerRow: (used.user + used.system) / ROWS };
}

/**
 * The rows made by PostgreSQL in statements of 250,000 rows (indexes made after), then the
 * rollups built from them in SQL (scripts/bench/postgres-rows.ts), then ANALYZE as autovacuum would do after a while.
 */
async function generateInSql(
  db: Db,
  set: { organisationId: string; workspaces: string[]; keys: string[]; configs: string[]; now: number },
): Promise<{ rowsMs: number; rollupsMs: number }> {
  const started = performance.now();
  const whole = { ...set, rows: ROWS, spanMs: 89 * DAY_MS };
  const CHUNK = 250_000;
  // The indexes are made once the rows are in (much faster than growing them row by row).
  await withoutIndexes(db, 'request_logs', async () => {
    for (let from = 0; from < ROWS; from += CHUNK) {
      await insertGeneratedRows(db, whole, from, Math.min(ROWS, from + CHUNK));
      process.stderr.write(
        `  ${Math.min(ROWS, from + CHUNK)} rows, ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
      );
    }
  });
  const rowsMs = performance.now() - started;
  await buildRollupsFromLogsFast(db);
  await buildMetadataRollupsFromLogsFast(db, METADATA_KEYS);
  await buildNarrowRollupsFromLogsFast(db, METADATA_KEYS);
  await sql`analyze`.execute(db);
  return { rowsMs, rollupsMs: performance.now() - started - rowsMs };
}

/**
 * A retention run as the server's job does it (bounded DELETE batches), with the clock 30 days
 * ahead: the request logs older than 60 days (a third of the rows) and their rollups go.
 */
async function timeRetention(db: Db, now: number): Promise<string> {
  const worker = createRetentionWorker({
    db,
    clock: { now: () => now + 30 * DAY_MS },
    logger: createLogger({ level: 'warn', pretty: false }),
    config: { log_retention_display: 90, metrics_retention_display: 90, retention_interval_ms: 3_600_000 },
    exportFiles: { remove: async () => undefined } as unknown as ExportFiles,
  });
  const started = performance.now();
  const run = await worker.runOnce();
  const ms = performance.now() - started;
  return `retention run: ${run.logsDeleted} request logs and ${run.rollupRowsDeleted} rollup rows deleted in ${(ms / 1000).toFixed(1)} s (${((ms / (run.logsDeleted + run.rollupRowsDeleted)) * 1000).toFixed(0)} ms per 1,000 rows, one DELETE each)`;
}

/** Rows per rollup table and period, and the database's size: what the rollups cost on disk. */
async function storage(db: Db, dir: string): Promise<string> {
  const count = async (table: 'analytics_rollups' | 'analytics_key_rollups') =>
    (
      await db
        .selectFrom(table)
        .select(['period', sql<number>`count(*)`.as('n')])
        .groupBy('period')
        .orderBy('period')
        .execute()
    )
      .map((r) => `${r.period}h ${r.n}`)
      .join(', ');
  const bytes =
    engineOf(db) === 'postgres'
      ? Number(
          (await sql<{ size: string }>`SELECT pg_database_size(current_database()) AS size`.execute(db)).rows[0]!.size,
        )
      : statSync(join(dir, DATABASE_FILE)).size;
  return `analytics_rollups rows: ${await count('analytics_rollups')}; analytics_key_rollups rows: ${await count('analytics_key_rollups')}; database ${(bytes / 1e6).toFixed(0)} MB`;
}

/** A fresh database on the server of `adminUrl`, for this run only. */
async function createPostgresDatabase(adminUrl: string): Promise<NonNullable<typeof postgres>> {
  const name = REUSE ?? KEEP ?? `svcgw_bench_analytics_${randomBytes(6).toString('hex')}`;
  if (!REUSE) {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.query(`CREATE DATABASE ${name}`);
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { adminUrl, name, url: url.toString() };
}

/** Drops the run's database, unless it was asked to be kept or reused. */
async function dropPostgresDatabase(): Promise<void> {
  if (!postgres || KEEP || REUSE) return;
  const client = new pg.Client({ connectionString: postgres.adminUrl });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${postgres.name} WITH (FORCE)`);
  await client.end();
  postgres = null;
}

/** Resident memory of a process in MB, from /proc (Linux); '?' elsewhere. */
function rssMb(pid: number): string {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? (Number(kb) / 1024).toFixed(0) : '?';
  } catch {
    return '?';
  }
}

/** Its own connection pool: the one used before the long generation may have been closed by the server. */
const timing = new Agent();

async function timed(url: string, key: string): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  const res = await request(url, { headers: { 'x-service-api-key': key }, dispatcher: timing });
  await res.body.text();
  return { ms: performance.now() - started, status: res.statusCode };
}

/** The generator's inputs for a new database: five workspaces made through the API, new key and config ids. */
async function freshSet(gatewayUrl: string, adminKey: string): Promise<BenchSet> {
  const workspaces: string[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await request(`${gatewayUrl}/v1/workspaces`, {
      method: 'POST',
      headers: { 'x-service-api-key': adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Team ${i}` }),
    });
    workspaces.push(((await res.body.json()) as { id: string }).id);
  }
  return {
    workspaces,
    keys: Array.from({ length: 40 }, () => randomUUID()),
    configs: Array.from({ length: 5 }, () => randomUUID()),
    now: Date.now(),
    rows: ROWS,
  };
}

/**
 * The inputs a kept database was generated with, read back from it: the workspaces by name, the
 * keys from the most used (the generator's first), and the newest row's time as "now". The
 * bootstrap admin key of that run is not known any more: its hash is replaced by this run's.
 */
async function keptSet(db: Db, adminKey: string): Promise<BenchSet> {
  await db
    .updateTable('api_keys')
    .set({ key_hash: hashKey(adminKey), key_hint: keyHint(adminKey) })
    .where('name', '=', 'Owner admin key (bootstrap)')
    .execute();
  const workspaces = (
    await db.selectFrom('workspaces').select('id').where('name', 'like', 'Team %').orderBy('name').execute()
  ).map((w) => w.id);
  const keys = (
    await db
      .selectFrom('analytics_key_rollups')
      .select('api_key_id')
      .where('period', '=', 672)
      .groupBy('api_key_id')
      .orderBy(sql`sum(requests)`, 'desc')
      .execute()
  ).map((k) => k.api_key_id);
  const { newest, rows } = await db
    .selectFrom('request_logs')
    .select([sql<string>`max(created_at)`.as('newest'), sql<string>`count(*)`.as('rows')])
    .executeTakeFirstOrThrow();
  return { workspaces, keys, configs: [], now: Date.parse(newest), rows: Number(rows) };
}

interface BenchSet {
  workspaces: string[];
  keys: string[];
  configs: string[];
  now: number;
  rows: number;
}

async function main(): Promise<void> {
  const adminKey = randomBytes(20).toString('hex');
  dataDir = mkdtempSync(join(tmpdir(), 'svcgw-bench-analytics-'));
  if (values['database-url']) postgres = await createPostgresDatabase(values['database-url']);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVCGW_') && v !== undefined) env[k] = v;
  const gateway = await startNode({
    name: 'svcgw serve',
    args: [join(PACKAGE_ROOT, 'bin', 'svcgw'), 'serve', '--port', '0', '--data-dir', dataDir],
    cwd: PACKAGE_ROOT,
    env: {
      ...env,
      SVCGW_BOOTSTRAP_ADMIN_KEY: adminKey,
      SVCGW_LOG_LEVEL: 'warn',
      SVCGW_ANALYTICS_ROLLUP_METADATA_KEYS: METADATA_KEYS.join(','),
      ...(postgres ? { SVCGW_DATABASE_URL: postgres.url } : {}),
      ...(values['sqlite-cache-mb'] ? { SVCGW_SQLITE_CACHE_MB: values['sqlite-cache-mb'] } : {}),
    },
  });
  // This process's own connection to the server's database, as a second writer would be.
  const db = openDatabase({ data_dir: dataDir, database_url: postgres?.url });
  const organisationId = (await db.selectFrom('organisations').select('id').executeTakeFirstOrThrow()).id;
  const set = REUSE ? await keptSet(db, adminKey) : await freshSet(gateway.url, adminKey);
  const { workspaces, keys, configs, now } = set;
  process.stdout.write(
    `svcgw analytics benchmark, ${new Date(now).toISOString()}; gateway pid ${gateway.pid} on ${postgres ? `PostgreSQL (database ${postgres.name})` : 'SQLite'}\n`,
  );
  const rssBefore = rssMb(gateway.pid);
  let generateMs = 0;
  let generateCpuUsPerRow: number | null = null;
  // Every narrow rollup is built whole below (in SQL, or by insertBatch): they are read from the
  // first hour on, and the gateway's backfill job (docs/analytics.md#narrow-rollups) has nothing to do.
  if (REUSE) {
    // A database migrated by an earlier build of migration 0035 (which summed every narrow row
    // at start) lacks the mark: it is made here.
    await sql`create table if not exists analytics_narrow_since (id integer not null primary key, since_hour integer not null)`.execute(
      db,
    );
  }
  await sql`insert into analytics_narrow_since (id, since_hour) values (1, 0) on conflict (id) do update set since_hour = 0`.execute(
    db,
  );
  if (REUSE) {
    process.stdout.write(`reused database ${REUSE}: ${set.rows} request logs\n`);
    if (
      postgres &&
      (await db.selectFrom('analytics_metadata_rollups').select('period').limit(1).execute()).length === 0
    ) {
      const started = performance.now();
      await buildMetadataRollupsFromLogsFast(db, METADATA_KEYS);
      await sql`analyze analytics_metadata_rollups`.execute(db);
      process.stdout.write(
        `metadata rollups (${METADATA_KEYS.join(', ')}) built from them in SQL in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
      );
    }
    if (
      postgres &&
      (await db.selectFrom('analytics_narrow_rollups').select('period').limit(1).execute()).length === 0
    ) {
      const started = performance.now();
      await buildNarrowRollupsFromLogsFast(db, METADATA_KEYS);
      await sql`analyze analytics_narrow_rollups`.execute(db);
      process.stdout.write(
        `narrow rollups built from them in SQL in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
      );
    }
  } else if (GENERATE === 'sql') {
    const made = await generateInSql(db, { organisationId, workspaces, keys, configs, now });
    generateMs = made.rowsMs + made.rollupsMs;
    process.stdout.write(
      `generated ${ROWS} request logs over 89 days in SQL in ${(made.rowsMs / 1000).toFixed(1)} s, rollups built from them in ${(made.rollupsMs / 1000).toFixed(1)} s\n`,
    );
  } else {
    // Every row is written through insertBatch from now on: the keys' rollups are whole from the start.
    await db.updateTable('analytics_metadata_keys').set({ since_hour: 0 }).execute();
    const generated = await generate(db, organisationId, workspaces, now, keys, configs);
    generateMs = generated.ms;
    generateCpuUsPerRow = generated.cpuUsPerRow;
    process.stdout.write(
      `generated ${ROWS} request logs over 89 days through insertBatch in ${(generated.ms / 1000).toFixed(1)} s (${generated.cpuUsPerRow.toFixed(1)} µs CPU per row, rows and rollups)\n`,
    );
  }
  process.stdout.write(`${await storage(db, dataDir)}\n`);

  const whole = `start_time=${new Date(now - 90 * DAY_MS).toISOString()}`;
  const first = await timed(`${gateway.url}/v1/analytics/summary?${whole}`, adminKey);
  process.stdout.write(
    `first query: ${Math.round(first.ms)} ms; gateway RSS ${rssBefore} MB before the logs were written, ${rssMb(gateway.pid)} MB now\n\n`,
  );

  const all =
    'cost,total_tokens,avg_tokens,avg_input_tokens,avg_output_tokens,avg_latency,p95_latency,p99_latency,success_rate,error_count,cache_hit_rate,last_seen,first_seen';
  const cases: Array<[string, string]> = [
    ['summary (90 days)', `/v1/analytics/summary?${whole}`],
    ['summary (default 7 days)', '/v1/analytics/summary'],
    [
      'summary, metadata + status filter',
      `/v1/analytics/summary?${whole}&metadata=${encodeURIComponent('{"env":"prod"}')}&status_code=200,429`,
    ],
    [
      `summary, two metadata pairs (${METADATA_KEYS.includes('env+team') ? 'rollups' : 'request_logs'})`,
      `/v1/analytics/summary?${whole}&metadata=${encodeURIComponent('{"env":"prod","team":"team-1"}')}`,
    ],
    ['summary, model filter', `/v1/analytics/summary?${whole}&model=gpt-4o`],
    [
      'groups/model, metadata filter, all columns',
      `/v1/analytics/groups/model?${whole}&metadata=${encodeURIComponent('{"team":"team-1"}')}&columns=${all}`,
    ],
    ...['ai_service', 'model', 'status_code', 'api_key', 'config', 'workspace', 'provider', 'prompt'].map(
      (g): [string, string] => [`groups/${g}, all columns`, `/v1/analytics/groups/${g}?${whole}&columns=${all}`],
    ),
    ['groups/model, count only', `/v1/analytics/groups/model?${whole}`],
    ['logs/groups/api_key, p99', `/v1/logs/groups/api_key?${whole}&columns=p99_latency`],
    ...['requests', 'cost', 'latency', 'tokens', 'errors', 'errors/rate', 'cache/hit-rate'].map(
      (m): [string, string] => [`graphs/${m} (day)`, `/v1/analytics/graphs/${m}?${whole}&interval=day`],
    ),
    ['graphs/latency (hour: 2,160 buckets)', `/v1/analytics/graphs/latency?${whole}&interval=hour`],
    ['graphs/latency (day), model filter', `/v1/analytics/graphs/latency?${whole}&interval=day&model=gpt-4o`],
    [
      'graphs/latency (day), metadata filter',
      `/v1/analytics/graphs/latency?${whole}&interval=day&metadata=${encodeURIComponent('{"env":"dev"}')}`,
    ],
  ];
  if (postgres) {
    // Log listing: 50 newest rows matching the filters, and their total.
    const day = (ago: number) => new Date(now - ago * DAY_MS).toISOString();
    const logs = '/v1/logs?page_size=50';
    cases.push(
      ['logs, no filter', logs],
      ['logs, workspace', `${logs}&workspace_id=${workspaces[3]}`],
      ['logs, api_key (rare key)', `${logs}&api_key_id=${keys[35]}`],
      ['logs, model (rarest)', `${logs}&model=gemini-2.0-flash`],
      ['logs, provider', `${logs}&provider=anthropic`],
      ['logs, status_code=400', `${logs}&status_code=400`],
      ['logs, one day 45 days ago', `${logs}&start_time=${day(46)}&end_time=${day(45)}`],
      ['logs, model + status + 7 days', `${logs}&model=gpt-4o&status_code=500&start_time=${day(7)}`],
      ['logs, page 100 of a key', `${logs}&api_key_id=${keys[0]}&current_page=100`],
    );
  }
  const results: Array<{ name: string; median: number; max: number; status: number }> = [];
  for (const [name, path] of cases) {
    if (values.only !== undefined && !name.includes(values.only)) continue;
    const times: number[] = [];
    let status = 0;
    for (let i = 0; i < RUNS; i++) {
      const r = await timed(`${gateway.url}${path}`, adminKey);
      times.push(r.ms);
      status = r.status;
    }
    times.sort((a, b) => a - b);
    results.push({ name, median: times[Math.floor(times.length / 2)]!, max: times.at(-1)!, status });
  }
  const width = Math.max(...results.map((r) => r.name.length));
  process.stdout.write(`${'endpoint'.padEnd(width)}  status  median ms  max ms  < ${TARGET_MS} ms\n`);
  for (const r of results) {
    process.stdout.write(
      `${r.name.padEnd(width)}  ${String(r.status).padEnd(6)}  ${r.median.toFixed(0).padStart(9)}  ${r.max.toFixed(0).padStart(6)}  ${r.max < TARGET_MS ? 'yes' : 'NO'}\n`,
    );
  }
  process.stdout.write(`\ngateway RSS after the queries: ${rssMb(gateway.pid)} MB\n`);
  // A kept database stays whole for the next run: no retention run on it.
  const retention = postgres && !KEEP && !REUSE ? await timeRetention(db, now) : null;
  if (retention) process.stdout.write(`${retention}\n`);
  await db.destroy();
  process.stdout.write(
    `\nBENCH_JSON ${JSON.stringify({ engine: postgres ? 'postgres' : 'sqlite', rows: set.rows, runs: RUNS, generate: REUSE ? 'reused' : GENERATE, generate_ms: Math.round(generateMs), generate_cpu_us_per_row: generateCpuUsPerRow === null ? null : Number(generateCpuUsPerRow.toFixed(1)), retention, first_query_ms: Math.round(first.ms), rss_mb: rssMb(gateway.pid), results: results.map((r) => ({ ...r, median: Math.round(r.median), max: Math.round(r.max) })) })}\n`,
  );
  await timing.close();
  await stopAll();
  await dropPostgresDatabase();
  if (results.some((r) => r.status !== 200)) process.exitCode = 1;
}

main().catch(async (error: unknown) => {
  process.stderr.write(`bench-analytics: ${(error as Error).stack ?? String(error)}\n`);
  await stopAll();
  await dropPostgresDatabase().catch(() => undefined);
  process.exitCode = 1;
});
