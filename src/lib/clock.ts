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

/** The last stamp made: the gateway stamps several records per request, many in the same millisecond. */
let lastMs = NaN;
let lastIso = '';

/** `new Date(ms).toISOString()`, remembered for the last millisecond asked. */
export function isoAt(ms: number): string {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}
