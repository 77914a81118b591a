import type { MaybePromise } from '../lib/maybe-promise.js';

/** One counter to check and increase: a bucket of a limit within one window. */
export interface CounterCheck {
  /** Identifies the bucket and its window, e.g. `rl:<policy>:<group values>:<window start>`. */
  key: string;
  limit: number;
  amount: number;
  /** When the window ends; the counter may be forgotten after it. */
  expiresAt: number;
}

export type ConsumeResult = { allowed: true; counts: number[] } | { allowed: false; index: number; count: number };

/**
 * Where rate-limit counters live: in this process (one instance) or in Redis (several). Both
 * check and increase all counters of a request atomically, so concurrent requests cannot
 * overshoot a limit, and a refused request counts against none of them. The in-process store
 * answers without a promise; Redis answers with one.
 */
export interface CounterStore {
  /** All-or-nothing: adds every `amount` if no counter would pass its limit. */
  consume(checks: CounterCheck[], now: number): MaybePromise<ConsumeResult>;
  /** Reads counters without changing them (token limits admit while tokens remain). */
  peek(keys: string[], now: number): MaybePromise<number[]>;
  /** Adds amounts without a limit (the real token usage, once a response has ended). */
  add(entries: Array<Pick<CounterCheck, 'key' | 'amount' | 'expiresAt'>>, now: number): MaybePromise<void>;
  /** Resolves when the store answers within `timeoutMs`; rejects otherwise (readiness). */
  ping(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}
