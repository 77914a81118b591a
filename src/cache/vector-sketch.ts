import { createHash } from 'node:crypto';

/** Bits in an embedding's sketch; 8 × 32-bit words per entry in memory. */
export const SKETCH_BITS = 256;
export const SKETCH_WORDS = SKETCH_BITS / 32;

/** A copy of `vector` scaled to unit length (cosine similarity is then a dot product); null for the zero vector. */
export function normalise(vector: ArrayLike<number>): Float32Array | null {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  if (!(sum > 0) || !Number.isFinite(sum)) return null;
  const scale = 1 / Math.sqrt(sum);
  const out = new Float32Array(vector.length);
  for (let i = 0; i < vector.length; i++) out[i] = vector[i]! * scale;
  return out;
}

export function dot(a: Float32Array, b: Float32Array): number {
  const n = Math.min(a.length, b.length);
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    s0 += a[i]! * b[i]!;
    s1 += a[i + 1]! * b[i + 1]!;
    s2 += a[i + 2]! * b[i + 2]!;
    s3 += a[i + 3]! * b[i + 3]!;
  }
  for (; i < n; i++) s0 += a[i]! * b[i]!;
  return s0 + s1 + s2 + s3;
}

/**
 * Random-hyperplane sketch of a vector: the signs of 256 coordinates of a fixed pseudo-random
 * rotation of it. Two vectors at angle θ disagree on each bit with probability ≈ θ/π, so the
 * Hamming distance of sketches estimates similarity at a fraction of the cost of a dot
 * product. The rotation is two rounds of random sign flips and a Walsh–Hadamard transform
 * (O(n log n) instead of a dense 256 × n projection); its signs are derived from a fixed seed,
 * so sketches stored in the database stay valid across restarts.
 */
export function sketch(vector: Float32Array): Uint32Array {
  const n = paddedLength(vector.length);
  const [signs1, signs2] = rotationSigns(n);
  const work = new Float64Array(n);
  for (let i = 0; i < vector.length; i++) work[i] = signs1![i]! * vector[i]!;
  walshHadamard(work);
  for (let i = 0; i < n; i++) work[i]! *= signs2![i]!;
  walshHadamard(work);
  const bits = new Uint32Array(SKETCH_WORDS);
  for (let b = 0; b < SKETCH_BITS; b++) if (work[b]! > 0) bits[b >>> 5]! |= 1 << (b & 31);
  return bits;
}

/**
 * The largest sketch distance at which an entry may still reach `threshold`: the expected
 * distance at the threshold's angle plus five standard deviations (binomial), so a match at
 * or above the threshold is missed only with negligible probability.
 */
export function hammingCutoff(threshold: number): number {
  const p = Math.acos(Math.min(1, Math.max(-1, threshold))) / Math.PI;
  const mean = SKETCH_BITS * p;
  return Math.min(SKETCH_BITS, Math.ceil(mean + 5 * Math.sqrt(SKETCH_BITS * p * (1 - p)) + 1));
}

export function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

export const sketchToBuffer = (bits: Uint32Array): Buffer => Buffer.from(bits.buffer, bits.byteOffset, bits.byteLength);
export const vectorToBuffer = (vector: Float32Array): Buffer =>
  Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);

/** A float32 view of stored bytes (copied when the bytes are not 4-byte aligned). */
export function bufferToVector(bytes: Buffer): Float32Array {
  if (bytes.byteOffset % 4 === 0) return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
  return new Float32Array(Uint8Array.from(bytes).buffer);
}

export function bufferToSketch(bytes: Buffer, into: Uint32Array, offset: number): void {
  for (let w = 0; w < SKETCH_WORDS; w++) into[offset + w] = bytes.readUInt32LE(w * 4);
}

function paddedLength(dimension: number): number {
  let n = SKETCH_BITS;
  while (n < dimension) n *= 2;
  return n;
}

const signsByLength = new Map<number, Float64Array[]>();

/** Two vectors of ±1 from SHA-256 of a fixed seed: the same on every process and release. */
function rotationSigns(n: number): Float64Array[] {
  let signs = signsByLength.get(n);
  if (!signs) {
    signs = [1, 2].map((round) => {
      const out = new Float64Array(n);
      for (let block = 0; block * 256 < n; block++) {
        const bytes = createHash('sha256').update(`svcgw-cache-sketch:${n}:${round}:${block}`).digest();
        for (let i = 0; i < 256 && block * 256 + i < n; i++)
          out[block * 256 + i] = (bytes[i >>> 3]! >>> (i & 7)) & 1 ? 1 : -1;
      }
      return out;
    });
    signsByLength.set(n, signs);
  }
  return signs;
}

/** In-place unnormalised fast Walsh–Hadamard transform; `data.length` is a power of two. */
function walshHadamard(data: Float64Array): void {
  for (let half = 1; half < data.length; half *= 2) {
    for (let start = 0; start < data.length; start += half * 2) {
      for (let i = start; i < start + half; i++) {
        const a = data[i]!;
        const b = data[i + half]!;
        data[i] = a + b;
        data[i + half] = a - b;
      }
    }
  }
}
