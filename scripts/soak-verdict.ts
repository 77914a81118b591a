/** One memory reading of the soak (RSS, or memory outside the V8 heap): seconds since the load started, MB. */
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
  const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(1)}`;
  return `${what} after warm-up ${v.grew ? 'GREW' : 'flat'}: floor (lowest reading) ${v.floorFirst.toFixed(1)} MB in the first third of ${v.samples} samples, ${v.floorLast.toFixed(1)} MB in the last (${signed(growth)} MB; "grew" means more than ${GROWTH_MB} MB and ${GROWTH_SHARE * 100} %); lowest per ${windowS} s window trending ${signed(v.slopeMbPer10Min)} MB per 10 min; min ${v.min.toFixed(1)}, max ${v.max.toFixed(1)} MB`;
}
