/**
 * A value, or a promise of it when it had to be waited for. Hot paths answer from memory: a
 * promise and a turn of the microtask queue per step cost ~200 bytes and a fraction of a µs each,
 * and a gateway request takes several such steps (docs/benchmarks.md, "Allocation per request").
 */
export type MaybePromise<T> = T | Promise<T>;

/** `work()`, with a throw turned into a rejected promise: for callers that only handle rejections. */
export function rejectThrows<T>(work: () => MaybePromise<T>): MaybePromise<T> {
  try {
    return work();
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

/** `next` of `value`: at once when the value is at hand, once it resolves when it is a promise. */
export function andThen<T, U>(value: MaybePromise<T>, next: (resolved: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}
