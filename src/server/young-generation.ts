import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { setYoungGrowthFactor, V8_GROWTH_FACTOR } from '../lib/young-growth-factor.js';
import { nodeFlagGiven } from './node-flags.js';

/**
 * The size (both semi-spaces) `svcgw serve` lets V8's young generation grow to. V8's own limit
 * on 64-bit machines is 32 MB, which a server reaches within seconds of load and keeps: half of
 * it was 17 MB less RSS after the bench's load, for about 2 % more CPU per request, within the
 * measurement's noise (issue #19; docs/benchmarks.md, thirteenth pass).
 */
export const YOUNG_GENERATION_CAP_BYTES = 16 * 1024 * 1024;

/**
 * Whether the operator sized the young generation themselves (`node --max-semi-space-size=N
 * bin/svcgw serve`, or in NODE_OPTIONS): then svcgw leaves it alone.
 */
export function youngGenerationChosen(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return nodeFlagGiven(
    ['max-semi-space-size', 'semi-space-growth-factor', 'max-young-generation-size'],
    execArgv,
    nodeOptions,
  );
}

/** The growth factor that keeps a young generation of `size` bytes within `cap`: V8's own while doubling fits, none after. */
export function growthFactorFor(size: number, cap: number): number {
  return size * V8_GROWTH_FACTOR <= cap ? V8_GROWTH_FACTOR : 1;
}

function youngGenerationSize(): number {
  for (const space of getHeapSpaceStatistics()) if (space.space_name === 'new_space') return space.space_size;
  return 0;
}

/**
 * Caps the young generation at `cap` bytes, unless the operator sized it. V8 reads its maximum
 * only when the process starts (`--max-semi-space-size`), but it reads the growth factor each
 * time it grows the young generation, which it does at a young collection and only after as
 * many bytes as the generation holds have survived since the last growth (tens of collections
 * at this size): after every collection, the factor is set to 1 once doubling would pass the cap,
 * and back to V8's own when the idle collector has let the generation shrink. Started first thing
 * by `svcgw serve`, for the life of the process. A new isolate raises the factor again: worker
 * threads start through `startEvalWorker` (src/lib/eval-worker.ts), which sets it back.
 */
export function capYoungGeneration(cap = YOUNG_GENERATION_CAP_BYTES): void {
  if (youngGenerationChosen(process.execArgv, process.env.NODE_OPTIONS)) return;
  const follow = () => setYoungGrowthFactor(growthFactorFor(youngGenerationSize(), cap));
  follow();
  new PerformanceObserver(follow).observe({ entryTypes: ['gc'] });
}
