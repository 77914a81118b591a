import { setFlagsFromString } from 'node:v8';

/**
 * V8's `--semi-space-growth-factor`, as the young-generation cap of `svcgw serve` sets it. The
 * flag is the process's, not an isolate's, and V8 raises it back to at least 2 whenever it sets
 * up a new isolate's heap, so a worker thread's start undoes a factor of 1. Kept here, where
 * workers are started (eval-worker.ts), so that they can set it again.
 */
let held: number | null = null;

/** Sets the factor for the whole process, and remembers it while it is one a new isolate would undo. */
export function setYoungGrowthFactor(factor: number): void {
  setFlagsFromString(`--semi-space-growth-factor=${factor}`);
  held = factor < 2 ? factor : null;
}

/** The factor a new worker must set again, or null when V8's own (or none was set). */
export function heldYoungGrowthFactor(): number | null {
  return held;
}
