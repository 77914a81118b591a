import { setFlagsFromString } from 'node:v8';

/** V8's own `--semi-space-growth-factor`: each time it grows, the young generation doubles. */
export const V8_GROWTH_FACTOR = 2;

/**
 * V8's `--semi-space-growth-factor`, as the young-generation cap of `svcgw serve` sets it. The
 * flag is the process's, not an isolate's, and V8 raises it back to at least 2 whenever it sets
 * up a new isolate's heap, so a worker thread's start undoes a factor of 1. Kept here, where
 * workers are started (eval-worker.ts), so that they can set it again.
 */
let factor = V8_GROWTH_FACTOR;

/** Sets the factor for the whole process (nothing to do when it is the one set last). */
export function setYoungGrowthFactor(next: number): void {
  if (next === factor) return;
  setFlagsFromString(`--semi-space-growth-factor=${next}`);
  factor = next;
}

/** The factor a new worker must set again, or null when V8's own (or none was set). */
export function heldYoungGrowthFactor(): number | null {
  return factor < V8_GROWTH_FACTOR ? factor : null;
}
