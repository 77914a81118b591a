import { AppError } from '../lib/errors.js';
import type { AppliedRateLimit, RateHeaders } from './rate-limiter.js';

/** A 429 that carries the headers a rate-limited client needs. */
export class RateLimitedError extends AppError {
  readonly headers: Record<string, string>;

  constructor(limit: AppliedRateLimit, headers: RateHeaders, now: number) {
    super(
      'RATE_LIMITED',
      `Rate limit reached: ${limit.label} allows ${limit.value} ${limit.type}; retry after the window resets.`,
    );
    const resetSeconds = Math.max(1, Math.ceil((headers.resetAt - now) / 1000));
    this.headers = {
      'retry-after': String(resetSeconds),
      'x-ratelimit-limit': String(headers.limit),
      'x-ratelimit-remaining': String(headers.remaining),
      'x-ratelimit-reset': String(resetSeconds),
    };
  }
}

/** The rate-limit headers of an admitted request: the tightest limit that applied. */
export function rateHeaders(headers: RateHeaders, now: number): Record<string, string> {
  return {
    'x-ratelimit-limit': String(headers.limit),
    'x-ratelimit-remaining': String(headers.remaining),
    'x-ratelimit-reset': String(Math.max(0, Math.ceil((headers.resetAt - now) / 1000))),
  };
}
