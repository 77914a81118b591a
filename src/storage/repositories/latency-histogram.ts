import type SQLite from 'better-sqlite3';

// Latency histograms of request logs and their rollups. Bucket 0 holds latencies up to
// LATENCY_FLOOR_MS; bucket i ≥ 1 holds (FLOOR·γ^(i−1), FLOOR·γ^i] and stands for
// 2·FLOOR·γ^i/(γ+1), which is within (γ−1)/(γ+1) = 2.44 % of every latency in it. The last bucket takes everything above (~7.6 days).
// A histogram is stored sparse: (uint16 bucket, uint32 count) pairs, buckets ascending.

export const LATENCY_GAMMA = 1.05;
export const LATENCY_FLOOR_MS = 0.01;
export const LATENCY_BUCKETS = 512;
/** The largest relative error of a bucket's representative value: (γ−1)/(γ+1). */
export const LATENCY_RELATIVE_ERROR = (LATENCY_GAMMA - 1) / (LATENCY_GAMMA + 1);
const LOG_GAMMA = Math.log(LATENCY_GAMMA);

/** A stored (bucket, count) pair's length in bytes. */
const PAIR_BYTES = 6;
const EMPTY = new Uint8Array(0);
const bucketAt = (stored: Uint8Array, at: number) => stored[at]! | (stored[at + 1]! << 8);
const countAt = (stored: Uint8Array, at: number) =>
  stored[at + 2]! + stored[at + 3]! * 0x100 + stored[at + 4]! * 0x10000 + stored[at + 5]! * 0x1000000;

export function latencyBucket(ms: number): number {
  if (!(ms > LATENCY_FLOOR_MS)) return 0;
  return Math.min(LATENCY_BUCKETS - 1, Math.max(1, Math.ceil(Math.log(ms / LATENCY_FLOOR_MS) / LOG_GAMMA)));
}

/** The value a bucket stands for in percentiles. */
export const bucketValue = (bucket: number): number =>
  bucket === 0 ? LATENCY_FLOOR_MS : (2 * LATENCY_FLOOR_MS * LATENCY_GAMMA ** bucket) / (LATENCY_GAMMA + 1);

/** Dense counts (index = bucket) to the stored sparse form. */
export function encodeHistogram(counts: ArrayLike<number>): Buffer {
  let n = 0;
  for (let i = 0; i < counts.length; i++) if (counts[i]! > 0) n++;
  const out = Buffer.allocUnsafe(n * PAIR_BYTES);
  let at = 0;
  for (let i = 0; i < counts.length; i++) {
    const c = counts[i]!;
    if (c <= 0) continue;
    out.writeUInt16LE(i, at);
    out.writeUInt32LE(c, at + 2);
    at += PAIR_BYTES;
  }
  return out;
}

/**
 * Counts per bucket (a batch's few buckets) to the stored form: `encodeHistogram` of the same
 * counts, without a dense array of every bucket.
 */
export function encodeCounts(counts: ReadonlyMap<number, number>): Buffer {
  const buckets: number[] = [];
  for (const [bucket, count] of counts) if (count > 0 && bucket >= 0 && bucket < LATENCY_BUCKETS) buckets.push(bucket);
  buckets.sort((a, b) => a - b);
  const out = Buffer.allocUnsafe(buckets.length * PAIR_BYTES);
  let at = 0;
  for (const bucket of buckets) {
    out.writeUInt16LE(bucket, at);
    out.writeUInt32LE(counts.get(bucket)!, at + 2);
    at += PAIR_BYTES;
  }
  return out;
}

/** Adds a stored histogram into dense counts. */
export function addHistogram(into: Float64Array, stored: Uint8Array | null): void {
  if (!stored) return;
  for (let at = 0; at + PAIR_BYTES <= stored.length; at += PAIR_BYTES)
    into[bucketAt(stored, at)]! += countAt(stored, at);
}

/**
 * `encodeHistogram` of the sum of two stored histograms, merged pair by pair as both are stored
 * (buckets ascending) instead of through a dense array: the rollup upsert merges one per rollup
 * key and period, ~40 for each batch of request logs, and a 4 KB array per merge showed in
 * profiles. What is not in the stored form (buckets out of order or out of range) is added up
 * the dense way, with the same result as before.
 */
export function mergeHistograms(a: Uint8Array | null, b: Uint8Array | null): Buffer {
  const x = a ?? EMPTY;
  const y = b ?? EMPTY;
  const xEnd = x.length - (x.length % PAIR_BYTES);
  const yEnd = y.length - (y.length % PAIR_BYTES);
  const out = Buffer.allocUnsafe(xEnd + yEnd);
  let i = 0;
  let j = 0;
  let at = 0;
  let last = -1;
  while (i < xEnd || j < yEnd) {
    const fromX = i < xEnd ? bucketAt(x, i) : LATENCY_BUCKETS;
    const fromY = j < yEnd ? bucketAt(y, j) : LATENCY_BUCKETS;
    const bucket = Math.min(fromX, fromY);
    if (bucket <= last || bucket >= LATENCY_BUCKETS) return denseSum(a, b);
    let count = 0;
    if (fromX === bucket) {
      count += countAt(x, i);
      i += PAIR_BYTES;
    }
    if (fromY === bucket) {
      count += countAt(y, j);
      j += PAIR_BYTES;
    }
    last = bucket;
    if (count <= 0) continue;
    out.writeUInt16LE(bucket, at);
    out.writeUInt32LE(count, at + 2);
    at += PAIR_BYTES;
  }
  return out.subarray(0, at);
}

function denseSum(a: Uint8Array | null, b: Uint8Array | null): Buffer {
  const dense = new Float64Array(LATENCY_BUCKETS);
  addHistogram(dense, a);
  addHistogram(dense, b);
  return encodeHistogram(dense);
}

const registered = new WeakSet<SQLite.Database>();

/**
 * SQL functions over histograms, on this connection: `svcgw_hist_merge(a, b)` (the rollup
 * upsert), and the aggregates `svcgw_hist_sum(histogram)` and `svcgw_latency_hist(latency_ms)`
 * (analytics reads). Every process that writes request logs registers them on its connection.
 */
export function registerHistogramFunctions(sqlite: SQLite.Database): void {
  if (registered.has(sqlite)) return;
  registered.add(sqlite);
  sqlite.function('svcgw_hist_merge', { deterministic: true }, (a: unknown, b: unknown) =>
    mergeHistograms(a as Buffer | null, b as Buffer | null),
  );
  sqlite.aggregate('svcgw_hist_sum', {
    start: () => new Float64Array(LATENCY_BUCKETS),
    step: (dense: Float64Array, stored: unknown) => {
      addHistogram(dense, stored as Buffer | null);
      return dense;
    },
    result: (dense: Float64Array) => encodeHistogram(dense),
  });
  sqlite.aggregate('svcgw_latency_hist', {
    start: () => new Float64Array(LATENCY_BUCKETS),
    step: (dense: Float64Array, latency: unknown) => {
      dense[latencyBucket(Number(latency))]!++;
      return dense;
    },
    result: (dense: Float64Array) => encodeHistogram(dense),
  });
}
