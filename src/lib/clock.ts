/**
 * Time comes through a Clock so that windows, schedules and expiries can be driven by tests
 * instead of by the wall clock.
 */
export interface Clock {
  /** A property, not a method: callers pass `clock.now` around unbound. */
  now: () => number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to; for tests. */
export function createManualClock(start = Date.parse('2026-01-01T00:00:00.000Z')) {
  let current = start;
  return {
    now: () => current,
    set(ms: number) {
      current = ms;
    },
    advance(ms: number) {
      current += ms;
    },
  };
}

export const isoAt = (ms: number) => new Date(ms).toISOString();
