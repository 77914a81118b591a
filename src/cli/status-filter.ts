import { InvalidArgumentError } from 'commander';

/** `--status 429` (one code) or `--status 5xx` (a class: 500 to 599). */
export type StatusFilter = { code: number } | { class: number };

const HINT = 'expected an HTTP status code (429) or a class (4xx, 5xx).';

/** A flag parser for one status or one class. */
export function statusFilter(text: string): StatusFilter {
  const value = text.trim().toLowerCase();
  if (/^[1-5]xx$/.test(value)) return { class: Number(value[0]) };
  if (/^[1-5]\d\d$/.test(value)) return { code: Number(value) };
  throw new InvalidArgumentError(HINT);
}

export function statusMatches(filter: StatusFilter | undefined, code: number): boolean {
  if (filter === undefined) return true;
  return 'code' in filter ? code === filter.code : Math.floor(code / 100) === filter.class;
}

/** The single code the server filters on, or undefined when the CLI filters a class itself. */
export const serverStatusCode = (filter: StatusFilter | undefined): number | undefined =>
  filter && 'code' in filter ? filter.code : undefined;

export function describeStatus(filter: StatusFilter): string {
  return 'code' in filter ? String(filter.code) : `${filter.class}xx`;
}

/** A flag parser for a comma-separated list of codes and classes; a class becomes its 100 codes. */
export function statusList(text: string, previous: number[] = []): number[] {
  const codes = text
    .split(/[\s,]+/)
    .filter(Boolean)
    .flatMap((item) => {
      const filter = statusFilter(item);
      if ('code' in filter) return [filter.code];
      return Array.from({ length: 100 }, (_, i) => filter.class * 100 + i);
    });
  return [...new Set([...previous, ...codes])];
}
