import { Worker, type WorkerOptions } from 'node:worker_threads';
import { heldYoungGrowthFactor } from './young-growth-factor.js';

/** How long the starting thread waits for the worker's first line; past it, the worker goes on starting. */
const FIRST_LINE_WAIT_MS = 500;

/** The workerData key of the handshake (an Int32Array on shared memory). */
const HANDSHAKE = 'youngGrowthHandshake';

/**
 * Starts a worker thread on CommonJS source (evaluated, not a file: the built code has no
 * separate worker file to find), without undoing the young-generation cap of this process.
 *
 * V8 sets `--semi-space-growth-factor` back to 2 when it sets up the worker's heap, and the main
 * thread's young generation then doubled to 32 MB at its next collection: within a few
 * milliseconds under load, before the worker's own first line ran (docs/benchmarks.md,
 * seventeenth pass). So while a factor is held, the worker's first line sets it again, and this
 * thread waits for that line (~25 ms on the benchmark machine, once per worker start) so that no
 * collection of its own comes between.
 */
export function startEvalWorker(
  source: string,
  options: Omit<WorkerOptions, 'eval' | 'workerData'> & { workerData: object },
): Worker {
  const factor = heldYoungGrowthFactor();
  if (factor === null) return new Worker(source, { ...options, eval: true });
  const handshake = new Int32Array(new SharedArrayBuffer(4));
  const firstLine =
    `require('node:v8').setFlagsFromString('--semi-space-growth-factor=${factor}');` +
    `{ const h = require('node:worker_threads').workerData.${HANDSHAKE}; Atomics.store(h, 0, 1); Atomics.notify(h, 0); }\n`;
  const worker = new Worker(firstLine + source, {
    ...options,
    eval: true,
    workerData: { ...options.workerData, [HANDSHAKE]: handshake },
  });
  Atomics.wait(handshake, 0, 0, FIRST_LINE_WAIT_MS);
  return worker;
}
