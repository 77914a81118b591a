import { InvalidArgumentError } from 'commander';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/;

const DURATION_HINT = 'a duration such as 30s, 30m, 1h or 7d';
const TIME_HINT = 'an ISO 8601 date-time such as 2026-01-31T12:00:00Z';

/** `30s`, `30m`, `1h`, `7d`, `2w`, `500ms` → milliseconds; undefined when the text is not a duration. */
export function durationMs(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  return Number.isSafeInteger(Math.round(ms)) ? Math.round(ms) : undefined;
}

/** A flag parser: a duration (`1h`) as milliseconds. */
export function duration(text: string): number {
  const ms = durationMs(text);
  if (ms === undefined) throw new InvalidArgumentError(`expected ${DURATION_HINT}.`);
  return ms;
}

function isoOrUndefined(text: string): string | undefined {
  // Date.parse accepts bare numbers ("7") as years; a time must look like a date.
  if (!/^\d{4}-\d{2}-\d{2}/.test(text.trim())) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/**
 * A flag parser for a point in the past, `--since 1h`: a duration means that long before now,
 * anything else must be an ISO 8601 time.
 */
export function pastTimeAt(text: string, nowMs: number): string {
  const ms = durationMs(text);
  if (ms !== undefined) return new Date(nowMs - ms).toISOString();
  const iso = isoOrUndefined(text);
  if (iso === undefined) throw new InvalidArgumentError(`expected ${DURATION_HINT} (that long ago) or ${TIME_HINT}.`);
  return iso;
}

/** A flag parser for a point in the future, `--expires-at 30d`: a duration means that long from now. */
export function futureTimeAt(text: string, nowMs: number): string {
  const ms = durationMs(text);
  if (ms !== undefined) return new Date(nowMs + ms).toISOString();
  const iso = isoOrUndefined(text);
  if (iso === undefined) throw new InvalidArgumentError(`expected ${DURATION_HINT} (from now) or ${TIME_HINT}.`);
  return iso;
}

// The flag parsers take one argument: commander passes the previous value as the second.
export const pastTime = (text: string): string => pastTimeAt(text, Date.now());
export const futureTime = (text: string): string => futureTimeAt(text, Date.now());
