import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { quantile, runLoad, type LoadResult, type LoadTarget } from './load.js';
import { startNode, type BenchChild } from './processes.js';
import { createWorkspaceKey, enableLimits, preflight, targetsFor } from './setup.js';

/** Where the scale-out runs find PostgreSQL and Redis (the CI machine's defaults). */
const POSTGRES_URL = process.env.SVCGW_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.SVCGW_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface ScaleOutRun {
  instances: number;
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  failures: number;
}

export interface ScaleOutOptions {
  bin: string;
  cwd: string;
  env: Record<string, string>;
  mockUrl: string;
  connections: number;
  warmupMs: number;
  measureMs: number;
  maxRequests: number;
  /** Progress lines. */
  write(text: string): void;
}

/** Why the scale-out runs cannot happen here, or null when PostgreSQL and Redis answer. */
export async function scaleOutUnavailable(): Promise<string | null> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
  } catch (error) {
    return `PostgreSQL is not reachable at ${POSTGRES_URL} (${(error as Error).message}); set SVCGW_BENCH_POSTGRES_URL`;
  } finally {
    await client.end().catch(() => undefined);
  }
  const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    return `Redis is not reachable at ${REDIS_URL} (${(error as Error).message}); set SVCGW_BENCH_REDIS_URL`;
  } finally {
    redis.disconnect();
  }
  return null;
}

/**
 * Issue #18's figure: the gateway's chat throughput with one instance, then with three on one
 * PostgreSQL database and one Redis, the same connections spread evenly over them. Each run gets
 * a fresh database (dropped after) and a Redis key prefix of its own.
 */
export async function benchScaleOut(options: ScaleOutOptions): Promise<ScaleOutRun[]> {
  const runs: ScaleOutRun[] = [];
  for (const count of [1, 3]) runs.push(await runCluster(count, options));
  return runs;
}

async function runCluster(count: number, options: ScaleOutOptions): Promise<ScaleOutRun> {
  const database = `svcgw_bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  const adminKey = randomBytes(20).toString('hex');
  const env = {
    ...options.env,
    SVCGW_DATABASE_URL: url.toString(),
    SVCGW_REDIS_URL: REDIS_URL,
    SVCGW_REDIS_KEY_PREFIX: `svcgw-bench-${database}:`,
    SVCGW_BOOTSTRAP_ADMIN_KEY: adminKey,
    SVCGW_MASTER_KEY: randomBytes(32).toString('hex'),
    SVCGW_LOG_LEVEL: 'warn',
  };
  const dataDirs: string[] = [];
  const instances: BenchChild[] = [];
  const start = (i: number) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svcgw-bench-scale-'));
    dataDirs.push(dataDir);
    return startNode({
      name: `svcgw serve ${i + 1}/${count}`,
      args: [options.bin, 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir],
      cwd: options.cwd,
      env,
    });
  };
  try {
    options.write(
      `running chat via ${count} gateway instance(s) on PostgreSQL and Redis, ${options.connections} connections… `,
    );
    for (let i = 0; i < count; i++) instances.push(await start(i));
    const first = instances[0]!;
    const key = await createWorkspaceKey(first.url, adminKey);
    await enableLimits(first.url, adminKey);
    const targets = instances.map(
      (instance) => targetsFor('chat', { mockUrl: options.mockUrl, gatewayUrl: instance.url, gatewayKey: key }).gateway,
    );
    for (const [i, target] of targets.entries()) await preflight(`chat via instance ${i + 1}`, target);
    const results = await Promise.all(targets.map((target, i) => loadShare(target, i, count, options)));
    const run = combine(count, results);
    options.write(`${run.rps.toFixed(0)} req/s${run.failures > 0 ? `, ${run.failures} FAILED` : ''}\n`);
    return run;
  } finally {
    await Promise.all(instances.map((instance) => instance.stop()));
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}

/** This instance's share of the connections (the remainder goes to the first ones). */
function loadShare(target: LoadTarget, i: number, count: number, options: ScaleOutOptions): Promise<LoadResult> {
  const connections = Math.floor(options.connections / count) + (i < options.connections % count ? 1 : 0);
  return runLoad(target, {
    connections: Math.max(1, connections),
    warmupMs: options.warmupMs,
    measureMs: options.measureMs,
    maxRequests: Math.ceil(options.maxRequests / count),
    onWindow: { start: () => undefined, end: () => undefined },
  });
}

function combine(instances: number, results: LoadResult[]): ScaleOutRun {
  const all = new Float64Array(results.reduce((n, r) => n + r.latency.length, 0));
  let offset = 0;
  for (const r of results) {
    all.set(r.latency, offset);
    offset += r.latency.length;
  }
  all.sort();
  const count = (record: Record<string, number>) => Object.values(record).reduce((n, v) => n + v, 0);
  return {
    instances,
    requests: results.reduce((n, r) => n + r.requests, 0),
    // The windows run side by side: throughputs add up.
    rps: results.reduce((n, r) => n + r.rps, 0),
    p50Ms: quantile(all, 0.5),
    p99Ms: quantile(all, 0.99),
    failures: results.reduce((n, r) => n + count(r.non2xx) + count(r.errors) + r.badBodies, 0),
  };
}

export function scaleOutTable(runs: ScaleOutRun[]): string {
  const one = runs.find((r) => r.instances === 1);
  const lines = [
    '| gateway instances (PostgreSQL + Redis) | req/s | p50 ms | p99 ms | × one instance |',
    '|---|--:|--:|--:|--:|',
    ...runs.map(
      (r) =>
        `| ${r.instances} | ${r.rps.toFixed(0)} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${one && one.rps > 0 ? (r.rps / one.rps).toFixed(2) : '–'} |`,
    ),
  ];
  return lines.join('\n');
}
