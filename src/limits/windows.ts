/** Rate-limit units and their fixed windows, aligned to UTC boundaries. */
export type RateUnit = 'rps' | 'rpm' | 'rph' | 'rpd' | 'rpw';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;
/** 1970-01-01 was a Thursday; weeks start on Monday 00:00 UTC, 4 days later. */
const MONDAY_OFFSET = 4 * DAY;

export const WINDOW_MS: Readonly<Record<RateUnit, number>> = {
  rps: SECOND,
  rpm: MINUTE,
  rph: HOUR,
  rpd: DAY,
  rpw: WEEK,
};

export interface Window {
  start: number;
  end: number;
}

/**
 * The fixed window that holds `now`: the current minute, hour, UTC day, or week from Monday.
 * Fixed windows are exact under concurrency (one counter per window) and easy to reason about:
 * `x-ratelimit-reset` is simply the end of the window.
 */
export function windowAt(unit: RateUnit, now: number): Window {
  const size = WINDOW_MS[unit];
  const offset = unit === 'rpw' ? MONDAY_OFFSET : 0;
  const start = Math.floor((now - offset) / size) * size + offset;
  return { start, end: start + size };
}
