/** First retry waits about this long; each further retry doubles it. */
const BASE_DELAY_MS = 100;
const MAX_DELAY_MS = 8_000;
/** A `retry-after` longer than this is not waited for: the failure is returned instead. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Exponential backoff with "equal jitter": half the exponential delay plus a random share of
 * the other half, so that clients retrying together spread out but never retry at once.
 */
export function backoffDelay(retry: number, random: () => number = Math.random): number {
  const exponential = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** retry);
  return Math.round(exponential / 2 + random() * (exponential / 2));
}

/**
 * The wait a provider asked for: `retry-after-ms`, or `retry-after` in seconds or as an HTTP
 * date. Null when absent or unreadable.
 */
export function retryAfterMs(headers: Record<string, string | string[] | undefined>, now: number): number | null {
  const ms = first(headers['retry-after-ms']);
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms));
  const value = first(headers['retry-after']);
  if (value === null) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

const first = (value: string | string[] | undefined): string | null =>
  Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
