import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  describe as describeFailure,
  fuzzAgent,
  invalidBodyProblem,
  refusalShapeProblem,
  secretProblem,
  send,
  serverErrorProblem,
  tenantProblem,
  type Answer,
} from '../helpers/fuzz/check.js';
import { loadServedOperations, type Operation } from '../helpers/fuzz/openapi.js';
import { requestFor, type FuzzRequest } from '../helpers/fuzz/request.js';
import { buildWorld, type FuzzWorld } from '../helpers/fuzz/world.js';
import { startMockOpenAI, type MockOpenAI } from '../helpers/mock-openai-upstream.js';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

/**
 * Fuzzes every operation of the served OpenAPI document (wrong types, missing fields, values
 * out of range, huge and deeply nested bodies, broken encodings, unknown and foreign ids) as the
 * admin key, a workspace key and no key. CI runs a fixed seed and a few runs per operation;
 * SVCGW_FUZZ_RUNS (runs per operation) and SVCGW_FUZZ_SEED make the long run.
 */
const SEED = Number(process.env.SVCGW_FUZZ_SEED ?? 20_261_123);
const RUNS = process.env.SVCGW_FUZZ_RUNS ? Number(process.env.SVCGW_FUZZ_RUNS) : null;
const CONTROL_RUNS = RUNS ?? 8;
const GATEWAY_RUNS = RUNS ?? 12;
/** Shrinking a failure costs requests: it stops after this long with the smallest example so far. */
const SHRINK_BUDGET_MS = RUNS ? 60_000 : 3_000;
const MAX_BODY_BYTES = 1024 * 1024;
const timeoutFor = (operations: number, runs: number) => 60_000 + operations * runs * 150;

type Check = (req: FuzzRequest, answer: Answer) => string | null;
const CHECKS: Array<[string, Check]> = [
  ['no 5xx', (_req, answer) => serverErrorProblem(answer)],
  ['one error body with x-request-id', refusalShapeProblem],
  ['invalid body refused, no upstream call', invalidBodyProblem],
  ['tenant wall', tenantProblem],
  ['no secret in answers', (_req, answer) => secretProblem(world, answer)],
];

const DESTRUCTIVE = /\/(rotate|archive|unarchive|cancel|start|resend|reset)$/;
const isDestructive = (op: Operation) => !op.gateway && (op.method === 'DELETE' || DESTRUCTIVE.test(op.path));

let mock: MockOpenAI;
let t: TestServer;
let dataDir: string;
let world: FuzzWorld;
let operations: Operation[];

beforeAll(async () => {
  mock = await startMockOpenAI();
  dataDir = mkdtempSync(join(tmpdir(), 'svcgw-fuzz-'));
  t = await startTestServer({ dataDir, autoClose: false, env: { SVCGW_MAX_BODY_BYTES: String(MAX_BODY_BYTES) } });
  world = await buildWorld(t, mock, MAX_BODY_BYTES);
  operations = await loadServedOperations(t.baseUrl);
}, 60_000);

afterAll(async () => {
  await t?.close();
  await mock?.close();
  await fuzzAgent.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** With SVCGW_FUZZ_STATS=1, prints what the answers were per operation: shows the fuzzing reaches past validation. */
const stats = new Map<string, Map<string, number>>();
function tally(op: Operation, req: FuzzRequest, answer: Answer): void {
  if (!process.env.SVCGW_FUZZ_STATS) return;
  const counts = stats.get(op.id) ?? new Map<string, number>();
  const key = `${answer.status}${req.mustRefuse ? '!' : ''}${answer.upstreamCalls > 0 ? '^' : ''}`;
  counts.set(key, (counts.get(key) ?? 0) + 1);
  stats.set(op.id, counts);
}
afterAll(() => {
  for (const [id, counts] of stats)
    console.log(
      `${id}: ${[...counts]
        .sort()
        .map(([k, n]) => `${k}×${n}`)
        .join(' ')}`,
    );
});

/** Runs the properties over one operation; the shrunk counterexample when one fails. */
async function fuzzOperation(op: Operation, numRuns: number): Promise<string | null> {
  const property = fc.asyncProperty(requestFor(op, world), async (req) => {
    let answer: Answer;
    try {
      answer = await send(world, req);
    } catch (error) {
      throw new Error(describeFailure(req, null, `[no answer] ${(error as Error).message}`), { cause: error });
    }
    tally(op, req, answer);
    for (const [name, check] of CHECKS) {
      const problem = check(req, answer);
      if (problem) throw new Error(describeFailure(req, answer, `[${name}] ${problem}`));
    }
  });
  const details = await fc.check(property, {
    seed: SEED,
    numRuns,
    interruptAfterTimeLimit: SHRINK_BUDGET_MS + numRuns * 300,
    markInterruptAsFailure: false,
  });
  if (!details.failed) return null;
  const message =
    details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  return `${op.id} (seed ${details.seed}, path "${details.counterexamplePath}", after ${details.numRuns} runs, ${details.numShrinks} shrinks): ${message}`;
}

/** SVCGW_FUZZ_ONLY (a regular expression on `METHOD /path`) narrows a run, e.g. to replay one failure. */
const ONLY = process.env.SVCGW_FUZZ_ONLY ? new RegExp(process.env.SVCGW_FUZZ_ONLY) : null;

async function fuzzAll(selected: Operation[], numRuns: number): Promise<string[]> {
  const failures: string[] = [];
  for (const op of selected.filter((o) => !ONLY || ONLY.test(o.id))) {
    const failure = await fuzzOperation(op, numRuns);
    if (failure) failures.push(failure);
  }
  return failures;
}

describe('fuzzing every operation of the served OpenAPI document', () => {
  it('covers the whole document', () => {
    expect(operations.length).toBeGreaterThan(100);
    expect(operations.filter((op) => op.gateway).length).toBeGreaterThan(10);
    expect(operations.filter(isDestructive).length).toBeGreaterThan(10);
  });

  it(
    'control plane: no 5xx, the one error body with x-request-id, invalid bodies refused, tenant walls',
    async () => {
      const selected = operations.filter((op) => !op.gateway && !isDestructive(op));
      expect(await fuzzAll(selected, CONTROL_RUNS)).toEqual([]);
    },
    timeoutFor(110, CONTROL_RUNS),
  );

  it(
    'gateway: no 5xx, the one error body with x-request-id, an invalid body never reaches the provider',
    async () => {
      const selected = operations.filter((op) => op.gateway);
      expect(await fuzzAll(selected, GATEWAY_RUNS)).toEqual([]);
    },
    timeoutFor(25, GATEWAY_RUNS),
  );

  // Last: these archive, revoke and rotate (never the fixtures the callers depend on).
  it(
    'archiving, deleting, rotating: no 5xx, the one error body, tenant walls',
    async () => {
      const selected = operations.filter(isDestructive);
      expect(await fuzzAll(selected, CONTROL_RUNS)).toEqual([]);
    },
    timeoutFor(25, CONTROL_RUNS),
  );
});
