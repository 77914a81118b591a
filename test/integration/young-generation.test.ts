import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runNode, spawnServe } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/start-test-server.js';

const MODULE = pathToFileURL(fileURLToPath(new URL('../../dist/src/server/young-generation.js', import.meta.url))).href;
const EVAL_WORKER = pathToFileURL(fileURLToPath(new URL('../../dist/src/lib/eval-worker.js', import.meta.url))).href;
const MB = 1024 * 1024;

/**
 * A child `node` that caps its young generation at 16 MB as `svcgw serve` does, then allocates
 * as a server would (short turns, a share of each turn's objects living a while), and prints the
 * largest size its young generation reached. With a worker given, it starts one a third of the
 * way through (`eval`: through startEvalWorker, as svcgw's own workers do; `plain`: `new Worker`).
 */
const child = (worker: 'none' | 'eval' | 'plain') => `
import { getHeapSpaceStatistics } from 'node:v8';
import { Worker } from 'node:worker_threads';
const { capYoungGeneration } = await import(${JSON.stringify(MODULE)});
const { startEvalWorker } = await import(${JSON.stringify(EVAL_WORKER)});
capYoungGeneration(16 * 1024 * 1024);
const size = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
const living = [];
let largest = size();
for (let turn = 0; turn < 1500; turn++) {
  for (let i = 0; i < 2000; i++) {
    living.push({ turn, i, text: 'request ' + i, parts: [i, turn] });
    if (living.length > 40000) living.splice(0, 20000);
  }
  if (turn === 500 && '${worker}' !== 'none') {
    const source = 'setTimeout(() => {}, 200)';
    ('${worker}' === 'eval' ? startEvalWorker(source, { workerData: {} }) : new Worker(source, { eval: true })).unref();
  }
  largest = Math.max(largest, size());
  await new Promise((resolve) => setImmediate(resolve));
}
process.stdout.write(String(largest));
`;

async function largestYoungGeneration(
  nodeFlags: string[],
  worker: 'none' | 'eval' | 'plain' = 'none',
): Promise<number> {
  // A file, not `-e`: a worker inherits `--input-type=module`, and the workers' sources are CommonJS.
  const file = join(makeTempDir(), 'child.mjs');
  writeFileSync(file, child(worker));
  const { code, stdout, stderr } = await runNode([...nodeFlags, file]);
  if (code !== 0) throw new Error(`exit ${code}: ${stderr}`);
  return Number(stdout);
}

describe('the young-generation cap of svcgw serve, in a process under allocation load', () => {
  it('keeps the young generation at 16 MB, where V8 alone grows it to 32 MB', async () => {
    const capped = await largestYoungGeneration([]);
    expect(capped).toBeGreaterThan(4 * MB);
    expect(capped).toBeLessThanOrEqual(16 * MB);
  });

  it('keeps it there when a worker thread starts through startEvalWorker', async () => {
    const capped = await largestYoungGeneration([], 'eval');
    expect(capped).toBeGreaterThan(4 * MB);
    expect(capped).toBeLessThanOrEqual(16 * MB);
  });

  it('loses it when a worker thread starts plainly: V8 sets the growth factor back for the new isolate', async () => {
    expect(await largestYoungGeneration([], 'plain')).toBe(32 * MB);
  });

  it("leaves it to grow as far as the operator's own flag lets it", async () => {
    expect(await largestYoungGeneration(['--max-semi-space-size=16'])).toBe(32 * MB);
  });
});

describe('svcgw serve', () => {
  const TOKEN = 'metrics-token-0123456789abcdef';
  async function youngGenerationOfServe(env: Record<string, string>): Promise<number> {
    const server = await spawnServe(['--data-dir', makeTempDir()], { SVCGW_METRICS_TOKEN: TOKEN, ...env });
    const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    const line = /^nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)$/m.exec(await res.text());
    expect(line).not.toBeNull();
    await server.stop();
    return Number(line![1]);
  }

  it('starts with its young generation within 16 MB, which loading its modules would otherwise grow to 32', async () => {
    expect(await youngGenerationOfServe({})).toBeLessThanOrEqual(16 * MB);
    expect(await youngGenerationOfServe({ NODE_OPTIONS: '--max-semi-space-size=16' })).toBe(32 * MB);
  });
});
