/**
 * How far a token budget can be overshot by concurrent requests: 30 requests at once against a
 * 1,000-token budget of one API key, with English, Chinese and 40 KB `tools` bodies, on one
 * svcgw process and on two sharing Redis. Prints used/limit once every request has settled;
 * figures go to docs/limits.md. The mock provider reports usage the way OpenAI counts it.
 *
 *   npx tsc -p tsconfig.build.json && node dist/scripts/budget-overshoot.js [--redis redis://127.0.0.1:6379]
 *
 * Everything listens on 127.0.0.1; the processes it starts are stopped when it ends, and it
 * gives up after two minutes.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PACKAGE_ROOT } from '../src/lib/package-root.js';
import { budgetBody, type BudgetBodyKind } from '../test/helpers/budget-bodies.js';
import { startMockOpenAI } from '../test/helpers/mock-openai-upstream.js';
import { killAllNow, startNode, stopAll, type BenchChild } from './bench/processes.js';

const REQUESTS = 30;
const LIMIT = 1000;
/** The tools body needs more than 1,000 tokens, so it also runs against a budget that holds a few. */
const CASES: Array<{ kind: BudgetBodyKind; limit: number }> = [
  { kind: 'english', limit: LIMIT },
  { kind: 'chinese', limit: LIMIT },
  { kind: 'tools', limit: LIMIT },
  { kind: 'tools', limit: 40 * LIMIT },
];
const DEADLINE_MS = 120_000;
const BIN = join(PACKAGE_ROOT, 'bin', 'svcgw');

const { values } = parseArgs({ options: { redis: { type: 'string', default: 'redis://127.0.0.1:6379' } } });

interface Row {
  kind: BudgetBodyKind;
  limit: number;
  instances: number;
  /** What one request reserves, from a refusal's message. */
  reserved: number | null;
  admitted: number;
  refused: number;
  used: number;
}

/** The fields of gateway and admin answers this script reads. */
interface Answer {
  id: string;
  key: string;
  usage: { total_tokens: number };
  usage_limits: { current_usage: number };
  error?: { message: string };
}

async function json(
  url: string,
  init: { method?: string; key: string; body?: unknown; headers?: Record<string, string> },
): Promise<{ status: number; body: Answer }> {
  const response = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { 'x-service-api-key': init.key, 'content-type': 'application/json', ...init.headers },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return { status: response.status, body: (await response.json()) as Answer };
}

/** One case: a fresh key with a 1,000-token budget, 30 requests at once spread over the instances. */
async function runCase(
  gateways: BenchChild[],
  adminKey: string,
  upstream: Record<string, string>,
  kind: BudgetBodyKind,
  limit: number,
): Promise<Row> {
  const created = await json(`${gateways[0]!.url}/v1/api-keys/workspace/service`, {
    key: adminKey,
    body: {
      name: `overshoot ${randomUUID()}`,
      workspace_id: 'default',
      scopes: ['completions.write'],
      usage_limits: { credit_limit: limit, type: 'tokens' },
    },
  });
  if (created.status !== 200) throw new Error(`creating the key failed: ${JSON.stringify(created.body)}`);
  const results = await Promise.all(
    Array.from({ length: REQUESTS }, (_, i) =>
      json(`${gateways[i % gateways.length]!.url}/v1/chat/completions`, {
        key: created.body.key,
        body: budgetBody(kind),
        headers: upstream,
      }),
    ),
  );
  const admitted = results.filter((r) => r.status === 200);
  const reported = admitted.reduce((sum, r) => sum + r.body.usage.total_tokens, 0);
  // Usage is written in batches; wait (bounded) until the budget shows what the provider reported.
  let used = NaN;
  for (let attempt = 0; attempt < 100 && used !== reported; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    used = (await json(`${gateways[0]!.url}/v1/api-keys/${created.body.id}`, { key: adminKey })).body.usage_limits
      .current_usage;
  }
  const refused = results.filter((r) => r.status === 402);
  const needs =
    refused.length > 0 ? /needs up to (\d+) tokens/.exec(String(refused[0]!.body.error?.message))?.[1] : undefined;
  return {
    kind,
    limit,
    instances: gateways.length,
    reserved: needs ? Number(needs) : null,
    admitted: admitted.length,
    refused: refused.length,
    used,
  };
}

async function startGateways(
  count: number,
  env: Record<string, string>,
): Promise<{ gateways: BenchChild[]; adminKey: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svcgw-overshoot-'));
  process.once('exit', () => rmSync(dataDir, { recursive: true, force: true }));
  const adminKey = `overshoot-${randomBytes(16).toString('hex')}`;
  const gatewayEnv = { ...env, SVCGW_BOOTSTRAP_ADMIN_KEY: adminKey, SVCGW_LOG_LEVEL: 'warn', SVCGW_HOST: '127.0.0.1' };
  // The first creates the database; the second opens it once it exists.
  const first = await startNode({
    name: 'svcgw 1',
    args: [BIN, 'serve', '--port', '0', '--data-dir', dataDir],
    cwd: PACKAGE_ROOT,
    env: gatewayEnv,
  });
  const rest =
    count > 1
      ? [
          await startNode({
            name: 'svcgw 2',
            args: [BIN, 'serve', '--port', '0', '--data-dir', dataDir],
            cwd: PACKAGE_ROOT,
            env: gatewayEnv,
          }),
        ]
      : [];
  return { gateways: [first, ...rest], adminKey };
}

/** This environment without SVCGW_* settings, so a developer's own settings do not change the figures. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVCGW_') && v !== undefined) env[k] = v;
  return env;
}

async function main(): Promise<void> {
  const mock = await startMockOpenAI({ record: false, tokenizerUsage: true });
  const upstream = { 'x-service-provider': 'openai', 'x-service-custom-host': mock.baseUrl, authorization: 'Bearer k' };
  const rows: Row[] = [];
  try {
    for (const instances of [1, 2]) {
      const env =
        instances === 1
          ? cleanEnv()
          : {
              ...cleanEnv(),
              SVCGW_REDIS_URL: values.redis,
              SVCGW_REDIS_KEY_PREFIX: `svcgw-overshoot-${randomUUID()}:`,
            };
      const { gateways, adminKey } = await startGateways(instances, env);
      for (const { kind, limit } of CASES) rows.push(await runCase(gateways, adminKey, upstream, kind, limit));
      await stopAll();
    }
  } finally {
    await mock.close();
  }
  console.log(`${REQUESTS} concurrent requests per case, max_tokens 20 each\n`);
  console.log('body     limit   instances  reserved/request  admitted  refused  used (tokens)  used/limit');
  for (const r of rows) {
    console.log(
      `${r.kind.padEnd(8)} ${String(r.limit).padStart(6)}  ${String(r.instances).padStart(9)}  ${String(r.reserved ?? '-').padStart(16)}  ${String(r.admitted).padStart(8)}  ${String(r.refused).padStart(7)}  ${String(r.used).padStart(13)}  ${(r.used / r.limit).toFixed(3).padStart(10)}`,
    );
  }
}

const deadline = setTimeout(() => {
  console.error(`budget-overshoot: gave up after ${DEADLINE_MS / 1000} s`);
  killAllNow();
  process.exit(1);
}, DEADLINE_MS);
deadline.unref();
process.once('exit', () => killAllNow());
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void stopAll(2000).then(() => process.exit(130)));

main()
  .then(() => stopAll())
  .catch(async (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    await stopAll(2000);
    process.exitCode = 1;
  });
