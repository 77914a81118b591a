import { setFlagsFromString } from 'node:v8';
import { nodeFlagGiven } from './node-flags.js';

/**
 * How far V8 lets the old generation grow past what survived the last full collection before it
 * collects again, in percent. V8's own choice (up to 4× the live heap when collections are fast)
 * let a gateway with ~50 MB live grow to 300–480 MB under load and stay there; per-request
 * garbage that lives through two young collections (requests in flight, log rows waiting for
 * their batch) fills the old generation steadily. 50 % keeps the old generation within 1.5× of
 * the live heap for a full collection every few seconds at full load (docs/benchmarks.md,
 * "Memory under load").
 */
export const HEAP_GROWING_PERCENT = 50;

/**
 * The V8 flag `svcgw serve` sets at start, or null when the operator chose a value already
 * (`node --heap-growing-percent=N bin/svcgw serve`; `=0` gives V8 its own choice back).
 */
export function heapGrowthFlag(execArgv: readonly string[], nodeOptions: string | undefined): string | null {
  if (nodeFlagGiven(['heap-growing-percent'], execArgv, nodeOptions)) return null;
  return `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
}

/** Applies `heapGrowthFlag` to this process; V8 reads it at each full collection, so no restart is needed. */
export function limitHeapGrowth(): void {
  const flag = heapGrowthFlag(process.execArgv, process.env.NODE_OPTIONS);
  if (flag) setFlagsFromString(flag);
}
