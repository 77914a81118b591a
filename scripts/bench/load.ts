import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { Pool } from 'undici';

/** One kind of request, sent over and over: where to, what, and how to tell a good answer. */
export interface LoadTarget {
  /** e.g. http://127.0.0.1:8787 */
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** Streamed answers get a time-to-first-chunk figure. */
  stream: boolean;
  /**
   * Whether a 2xx answer is the one we expect (a wrong answer fast is not a fast answer); the
   * headers tell, for example, a cache hit from a provider call.
   */
  check(text: string, headers: IncomingHttpHeaders): boolean;
}

export interface LoadOptions {
  connections: number;
  warmupMs: number;
  measureMs: number;
  /** The measured window also ends after this many good responses. */
  maxRequests: number;
  /** Called as the measured window opens and closes, to read CPU counters at the same instants. */
  onWindow: { start(): void; end(): void };
}

export interface LoadResult {
  /** Good responses completed inside the measured window. */
  requests: number;
  windowMs: number;
  rps: number;
  /** Whole-response latency of each good response in the window, ms, sorted. */
  latency: Float64Array;
  /** Time to the first body chunk, ms, sorted (streams only). */
  firstChunk: Float64Array | null;
  /** Over warm-up and window: non-2xx answers by status, failures by error code, wrong bodies. */
  non2xx: Record<string, number>;
  errors: Record<string, number>;
  badBodies: number;
  /** One message for each kind of failure (at most five), to show what went wrong. */
  examples: string[];
}

const MAX_EXAMPLES = 5;

/**
 * A closed-loop load generator: `connections` workers, each with one request in flight on its
 * own keep-alive connection, sending the next as soon as the previous answer has fully arrived.
 * Warm-up responses are checked but not counted; the window ends at `measureMs` or
 * `maxRequests`, whichever comes first, and requests still in flight then are not counted.
 */
export async function runLoad(target: LoadTarget, options: LoadOptions): Promise<LoadResult> {
  const pool = new Pool(target.origin, { connections: options.connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const latency = new Float64Array(options.maxRequests);
  const firstChunk = target.stream ? new Float64Array(options.maxRequests) : null;
  const non2xx: Record<string, number> = {};
  const errors: Record<string, number> = {};
  const examples: string[] = [];
  let badBodies = 0;
  let count = 0;
  let phase: 'warmup' | 'measure' | 'done' = 'warmup';
  let windowStart = 0;
  let windowEnd = 0;

  const seen = new Set<string>();
  const note = (kind: string, message: string) => {
    if (seen.has(kind) || seen.size >= MAX_EXAMPLES) return;
    seen.add(kind);
    examples.push(message);
  };
  const openWindow = () => {
    if (phase !== 'warmup') return;
    options.onWindow.start();
    windowStart = performance.now();
    phase = 'measure';
  };
  const closeWindow = () => {
    if (phase !== 'measure') return;
    windowEnd = performance.now();
    options.onWindow.end();
    phase = 'done';
  };

  const once = async (): Promise<void> => {
    const started = performance.now();
    let first = 0;
    try {
      const { statusCode, headers, body } = await pool.request({
        path: target.path,
        method: 'POST',
        headers: target.headers,
        body: target.body,
      });
      let text = '';
      await new Promise<void>((resolve, reject) => {
        body.on('data', (chunk: Buffer) => {
          if (first === 0) first = performance.now();
          text += chunk.toString('utf8');
        });
        body.once('end', resolve);
        body.once('error', reject);
      });
      const ended = performance.now();
      if (statusCode < 200 || statusCode >= 300) {
        non2xx[statusCode] = (non2xx[statusCode] ?? 0) + 1;
        note(String(statusCode), `HTTP ${statusCode}: ${text.slice(0, 300)}`);
        return;
      }
      if (!target.check(text, headers)) {
        badBodies += 1;
        note('body', `unexpected body: ${text.slice(0, 300)}`);
        return;
      }
      if (phase !== 'measure') return;
      latency[count] = ended - started;
      if (firstChunk) firstChunk[count] = (first || ended) - started;
      if (++count >= options.maxRequests) closeWindow();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const key = typeof code === 'string' ? code : (error as Error).name || 'Error';
      errors[key] = (errors[key] ?? 0) + 1;
      note(key, `${key}: ${(error as Error).message}`);
      await sleep(5); // a refused connection fails at once; do not spin
    }
  };

  const worker = async () => {
    while (phase !== 'done') await once();
  };

  const opening = setTimeout(openWindow, options.warmupMs);
  const closing = setTimeout(() => {
    openWindow(); // a zero warm-up whose timer has not fired yet
    closeWindow();
  }, options.warmupMs + options.measureMs);
  try {
    await Promise.all(Array.from({ length: options.connections }, worker));
  } finally {
    clearTimeout(opening);
    clearTimeout(closing);
    await pool.close();
  }

  const windowMs = windowEnd - windowStart;
  return {
    requests: count,
    windowMs,
    rps: windowMs > 0 ? (count * 1000) / windowMs : 0,
    latency: latency.subarray(0, count).sort(),
    firstChunk: firstChunk ? firstChunk.subarray(0, count).sort() : null,
    non2xx,
    errors,
    badBodies,
    examples,
  };
}

/** The q-quantile (0..1) of sorted values, nearest-rank; NaN when there are none. */
export function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}
