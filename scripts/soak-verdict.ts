/**
 * One memory reading of the soak (RSS, memory outside the V8 heap, or the live heap after a major
 * collection): seconds since the load started, MB.
 */
export interface RssSample {
  atS: number;
  mb: number;
}

/** RSS "grew" when the floor of the last third is this much above the floor of the first third… */
export const GROWTH_MB = 5;
/** …and this share of it. */
export const GROWTH_SHARE = 0.05;
/** Below this many samples after warm-up (5 s apart), thirds say nothing. */
export const MIN_SAMPLES = 6;

export interface Verdict {
  grew: boolean;
  /** Lowest RSS of the first and of the last third of the samples after warm-up, MB. */
  floorFirst: number;
  floorLast: number;
  /** Least-squares slope of the lowest RSS of each `windowS` window, MB per 10 minutes. */
  slopeMbPer10Min: number;
  min: number;
  max: number;
  samples: number;
}

/**
 * Whether RSS grew after warm-up, told apart from the garbage collector's sawtooth: between
 * full collections RSS climbs and drops by tens of MB, so means over halves move with where the
 * run happened to stop in a tooth. What a leak raises is the floor, the RSS right after the
 * collections: so compare the lowest reading of the first third with the lowest of the last
 * third (each third spans several collections at any rate worth soaking at). The slope of the
 * per-window minima is printed next to it, to show a trend too slow to cross the threshold.
 */
export function judgeRss(samples: readonly RssSample[], windowS: number): Verdict | null {
  const valid = samples.filter((s) => Number.isFinite(s.mb));
  if (valid.length < MIN_SAMPLES) return null;
  const third = Math.floor(valid.length / 3);
  const floor = (xs: readonly RssSample[]) => Math.min(...xs.map((s) => s.mb));
  const floorFirst = floor(valid.slice(0, third));
  const floorLast = floor(valid.slice(valid.length - third));
  const growth = floorLast - floorFirst;
  const start = valid[0]!.atS;
  const windows = new Map<number, number>();
  for (const s of valid) {
    const w = Math.floor((s.atS - start) / windowS);
    windows.set(w, Math.min(windows.get(w) ?? Infinity, s.mb));
  }
  const points = [...windows].map(([w, mb]) => ({ x: (w + 0.5) * windowS, y: mb }));
  return {
    grew: growth > Math.max(GROWTH_MB, floorFirst * GROWTH_SHARE),
    floorFirst,
    floorLast,
    slopeMbPer10Min: slope(points) * 600,
    min: floor(valid),
    max: Math.max(...valid.map((s) => s.mb)),
    samples: valid.length,
  };
}

/** Below this many major collections after warm-up, the live heap after them says nothing. */
export const MIN_MAJOR_GCS = 2;
/** From this many, thirds of the collections are compared; below it, a least-squares line over them. */
export const THIRDS_FROM_GCS = 6;
/** …and they must spread over this share of the judged period, or they say nothing about its end. */
export const MIN_GC_SPAN_SHARE = 1 / 3;

export interface LiveHeapVerdict {
  grew: boolean;
  /** How the growth was measured: floors of thirds of the collections, or a line through them. */
  method: 'thirds' | 'slope';
  /** Live heap at the start and end, MB: floors of the first and last thirds, or the fitted line at the first collection and a period later. */
  first: number;
  last: number;
  /** Least-squares slope of the live heap after each collection, MB per 10 minutes. */
  slopeMbPer10Min: number;
  min: number;
  max: number;
  gcs: number;
  /** Seconds between the first and the last judged collection. */
  spanS: number;
}

/**
 * Whether the live heap (V8's used heap right after each major collection, from the probe) grew
 * after warm-up. This is what a leak in JavaScript raises, and unlike RSS or heapTotal it does not
 * depend on where the run stopped in a tooth of the collector's sawtooth. It still is not exact:
 * objects allocated while a collection was marking survive it as floating garbage, so each figure
 * is the live heap plus a little; the error only ever adds, hence the lowest figure of a third,
 * not its mean, estimates that third's live heap.
 *
 * That error is small next to the threshold (within 1 MB from one collection to the next in the
 * soaks tried, against 5 MB), so what a verdict needs most is collections far apart, and at 50
 * requests/s they come minutes apart: a 10-minute soak may hold two or three after warm-up.
 * - Fewer than `MIN_MAJOR_GCS` after warm-up, or the first and last less than `MIN_GC_SPAN_SHARE`
 *   of the period apart (`periodS`, from the end of warm-up to the end of the run), say nothing
 *   about its end: null.
 * - From `THIRDS_FROM_GCS` on, the lowest figure of the last third of the collections is compared
 *   with the lowest of the first third (two or more figures each, so one late high one is not a trend).
 * - In between, thirds would be single figures, so a least-squares line through all of them
 *   judges instead (with two, the line through both): its rise over the whole period, so that
 *   collections a third of it apart are as sensitive to a leak as ones spanning it (and their
 *   error, times three at most, stays under the threshold). Two soaks of 600 and 1,200 s at 50
 *   requests/s held 2 major GCs after warm-up, 352 and 410 s apart; a third held one.
 * "Grew" is then more than `GROWTH_MB` and `GROWTH_SHARE`, as for RSS: code space and bounded
 * caches still fill after warm-up, while 5 MB over a 10-minute soak at 50 requests/s is a leak of
 * about 170 bytes per request.
 */
export function judgeLiveHeap(points: readonly RssSample[], periodS: number): LiveHeapVerdict | null {
  const valid = points.filter((p) => Number.isFinite(p.mb) && Number.isFinite(p.atS));
  if (valid.length < MIN_MAJOR_GCS) return null;
  const spanS = valid.at(-1)!.atS - valid[0]!.atS;
  if (spanS < periodS * MIN_GC_SPAN_SHARE) return null;
  const fitted = valid.map((p) => ({ x: p.atS, y: p.mb }));
  const perS = slope(fitted);
  let first: number;
  let last: number;
  let method: LiveHeapVerdict['method'];
  if (valid.length >= THIRDS_FROM_GCS) {
    const third = Math.floor(valid.length / 3);
    const floor = (xs: readonly RssSample[]) => Math.min(...xs.map((p) => p.mb));
    first = floor(valid.slice(0, third));
    last = floor(valid.slice(valid.length - third));
    method = 'thirds';
  } else {
    const mean = (xs: readonly number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
    const atMean = mean(fitted.map((p) => p.y));
    const xMean = mean(fitted.map((p) => p.x));
    first = atMean + perS * (valid[0]!.atS - xMean);
    last = first + perS * periodS;
    method = 'slope';
  }
  return {
    grew: last - first > Math.max(GROWTH_MB, first * GROWTH_SHARE),
    method,
    first,
    last,
    slopeMbPer10Min: perS * 600,
    min: Math.min(...valid.map((p) => p.mb)),
    max: Math.max(...valid.map((p) => p.mb)),
    gcs: valid.length,
    spanS,
  };
}

const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(1)}`;

/** How the lines name the live heap after each major collection. */
export const LIVE_HEAP = 'live heap (after each major GC)';

/**
 * The soak's verdict on the live heap after each major collection after warm-up (`points`), over
 * `periodS` seconds; `what` names them (the soak says "during the load" when idle brackets judge instead).
 */
export function liveHeapLine(
  points: readonly RssSample[],
  periodS: number,
  what = LIVE_HEAP,
  /** What to do when the collections say nothing. */
  otherwise = 'soak longer',
): string {
  const v = judgeLiveHeap(points, periodS);
  if (!v) {
    const spanS = points.length > 1 ? points.at(-1)!.atS - points[0]!.atS : 0;
    return `${what} after warm-up: too few major GCs to judge (${points.length} in ${periodS.toFixed(0)} s, over ${spanS.toFixed(0)} s; needs ${MIN_MAJOR_GCS} at least a third of the period apart); ${otherwise}`;
  }
  const how =
    v.method === 'thirds'
      ? `lowest ${v.first.toFixed(1)} MB in the first third of ${v.gcs} major GCs, ${v.last.toFixed(1)} MB in the last`
      : `a line through ${v.gcs} major GCs ${v.spanS.toFixed(0)} s apart goes ${v.first.toFixed(1)} → ${v.last.toFixed(1)} MB over the ${periodS.toFixed(0)} s`;
  return `${what} after warm-up ${v.grew ? 'GREW' : 'flat'}: ${how} (${signed(v.last - v.first)} MB; "grew" means more than ${GROWTH_MB} MB and ${GROWTH_SHARE * 100} %); trending ${signed(v.slopeMbPer10Min)} MB per 10 min; min ${v.min.toFixed(1)}, max ${v.max.toFixed(1)} MB`;
}

/**
 * One idle bracket of the soak: the load paused (after warm-up) or stopped (at the end), nothing
 * in flight, and svcgw's own idle collector ran a full collection on the idle server.
 */
export interface IdleBracket {
  /** The live heap after that collection, MB; null when none came within the limit. */
  mb: number | null;
  /** Seconds from the load pausing to that collection, or to giving up. */
  waitedS: number;
}

export interface IdleHeapVerdict {
  grew: boolean;
  /** The live heap at idle after warm-up and at the end, MB. */
  first: number;
  last: number;
}

/**
 * Whether the live heap at idle grew from the bracket after warm-up to the one at the end. Both
 * figures come from the same kind of collection: full, forced by svcgw's idle collector, with no
 * request in flight, so no floating garbage and no collector timing in either, unlike the
 * collections V8 starts during the load (minutes apart at 50 requests/s, and only where they
 * happen to fall). Null when either collection did not come. "Grew" as for the other figures.
 */
export function judgeIdleHeap(afterWarmup: IdleBracket, atEnd: IdleBracket): IdleHeapVerdict | null {
  const first = afterWarmup.mb;
  const last = atEnd.mb;
  if (first === null || last === null || !Number.isFinite(first) || !Number.isFinite(last)) return null;
  return { grew: last - first > Math.max(GROWTH_MB, first * GROWTH_SHARE), first, last };
}

/** How the lines name the live heap after the idle collections. */
export const IDLE_HEAP = "live heap at idle (svcgw's own full GC, load paused, nothing in flight)";

/** The soak's verdict on the live heap at idle, from its two brackets. */
export function idleHeapLine(afterWarmup: IdleBracket, atEnd: IdleBracket): string {
  const v = judgeIdleHeap(afterWarmup, atEnd);
  const at = (b: IdleBracket) => (b.mb === null ? 'none' : `${b.mb.toFixed(1)} MB`);
  if (!v) {
    const missing = [
      afterWarmup.mb === null && `after warm-up (waited ${afterWarmup.waitedS.toFixed(0)} s)`,
      atEnd.mb === null && `at the end (waited ${atEnd.waitedS.toFixed(0)} s)`,
    ].filter(Boolean);
    return `${IDLE_HEAP}: not judged: no idle GC came ${missing.join(' nor ')}; after warm-up ${at(afterWarmup)}, at the end ${at(atEnd)}`;
  }
  return `${IDLE_HEAP}, after warm-up ${v.first.toFixed(1)} MB → at the end ${v.last.toFixed(1)} MB (${signed(v.last - v.first)} MB): ${v.grew ? 'GREW' : 'flat'} ("grew" means more than ${GROWTH_MB} MB and ${GROWTH_SHARE * 100} %; the GCs came ${afterWarmup.waitedS.toFixed(0)} and ${atEnd.waitedS.toFixed(0)} s after the load paused)`;
}

/**
 * The soak's headline: which memory grew, if any. The live heap growing is a leak in JavaScript;
 * memory outside the V8 heap growing is native (SQLite, malloc, buffers); RSS growing while both
 * are flat is the V8 heap's sizing and where the run stopped in a tooth of the collector's
 * sawtooth, not a leak. For the live heap, the idle brackets decide when both were measured
 * (`idleHeap`: undefined when the soak ran without them, null when a collection did not come);
 * otherwise the major collections during the load do. A figure that could not be judged is said to be so.
 */
export function memoryHeadline(v: {
  liveHeap: LiveHeapVerdict | null;
  idleHeap?: IdleHeapVerdict | null;
  outsideV8: Verdict | null;
  rss: Verdict | null;
}): string {
  const heap = v.idleHeap
    ? { grew: v.idleHeap.grew, name: 'the live heap at idle' }
    : v.liveHeap
      ? { grew: v.liveHeap.grew, name: 'the live heap after major GC' }
      : null;
  const grew: string[] = [];
  if (heap?.grew) grew.push(`${heap.name} (a leak in JavaScript)`);
  if (v.outsideV8?.grew) grew.push('memory outside the V8 heap (a native leak or an unbounded native cache)');
  const unknown: string[] = [];
  if (!heap)
    unknown.push(
      v.idleHeap === null
        ? 'the live heap (no idle GC in a bracket, and too few major GCs during the load)'
        : 'the live heap (too few major GCs after warm-up)',
    );
  if (!v.outsideV8) unknown.push('memory outside V8 (too few samples)');
  const unjudged = unknown.length > 0 ? `; not judged: ${unknown.join(', ')}` : '';
  if (grew.length > 0) return `memory verdict: GREW: ${grew.join(' and ')}${unjudged}`;
  const rss = v.rss ? (v.rss.grew ? 'RSS grew' : 'RSS flat') : 'RSS not judged (too few samples)';
  if (!heap || unknown.length > 0) {
    const flat = [heap?.name, v.outsideV8 && 'memory outside V8'].filter(Boolean);
    // RSS growing with the live heap unjudged is exactly the case GC timing can fake.
    const head = v.rss && !v.rss.grew ? 'no growth seen' : 'CANNOT TELL';
    return `memory verdict: ${head}: ${rss}${flat.length > 0 ? `, ${flat.join(' and ')} flat` : ''}${unjudged}; soak longer`;
  }
  if (v.rss?.grew)
    return `memory verdict: NOT A LEAK: RSS only grew (the V8 heap sized up between major GCs: GC timing); ${heap.name} and memory outside V8 were flat`;
  return `memory verdict: flat: ${heap.name}, memory outside V8 and ${v.rss ? 'RSS' : 'RSS (not judged: too few samples)'}`;
}

/** Least-squares slope of y over x; 0 with fewer than two distinct x. */
function slope(points: ReadonlyArray<{ x: number; y: number }>): number {
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  const sxx = points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  if (sxx === 0) return 0;
  return points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0) / sxx;
}

/** The soak's verdict on one memory figure (RSS by default): its floor after warm-up. */
export function verdictLine(samples: readonly RssSample[], windowS: number, what = 'RSS'): string {
  const v = judgeRss(samples, windowS);
  if (!v) return `${what} after warm-up: too few samples (fewer than ${MIN_SAMPLES}) to judge; soak longer`;
  const growth = v.floorLast - v.floorFirst;
  return `${what} after warm-up ${v.grew ? 'GREW' : 'flat'}: floor (lowest reading) ${v.floorFirst.toFixed(1)} MB in the first third of ${v.samples} samples, ${v.floorLast.toFixed(1)} MB in the last (${signed(growth)} MB; "grew" means more than ${GROWTH_MB} MB and ${GROWTH_SHARE * 100} %); lowest per ${windowS} s window trending ${signed(v.slopeMbPer10Min)} MB per 10 min; min ${v.min.toFixed(1)}, max ${v.max.toFixed(1)} MB`;
}
