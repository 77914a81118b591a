import { isSecretField } from '../../lib/redact.js';

/** Key order does not matter: JSON with sorted keys. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export const same = (a: unknown, b: unknown): boolean => canonical(a) === canonical(b);

/**
 * Whether `current` already has everything `desired` says: objects may carry more fields (the
 * server fills defaults such as a computed next reset), arrays match item by item.
 */
export function covers(current: unknown, desired: unknown): boolean {
  if (Array.isArray(desired))
    return (
      Array.isArray(current) &&
      current.length === desired.length &&
      desired.every((item, i) => covers(current[i], item))
    );
  if (desired !== null && typeof desired === 'object') {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return false;
    return Object.entries(desired).every(
      ([k, v]) => v === undefined || covers((current as Record<string, unknown>)[k], v),
    );
  }
  if (
    typeof desired === 'string' &&
    typeof current === 'string' &&
    !Number.isNaN(Date.parse(desired)) &&
    /^\d{4}-\d\d-\d\dT/.test(desired)
  ) {
    return Date.parse(desired) === Date.parse(current);
  }
  return (desired ?? null) === (current ?? null);
}

/** How the server shows a stored secret (`sk-p****abcd`); the same rule as the server's. */
export function maskSecret(raw: string): string {
  return raw.length >= 16 ? `${raw.slice(0, 4)}****${raw.slice(-4)}` : '****';
}

const isSecretConfigField = (name: string): boolean => name === 'custom_headers' || isSecretField(name);

/** A configurations object as the server would show it back (secret fields masked). */
export function shownConfigurations(config: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(config).map(([name, value]) => {
      if (!isSecretConfigField(name) || value === null || value === undefined) return [name, value];
      if (typeof value === 'string') return [name, maskSecret(value)];
      if (typeof value === 'object' && !Array.isArray(value))
        return [name, Object.fromEntries(Object.keys(value).map((k) => [k, '****']))];
      return [name, '****'];
    }),
  );
}

/** The names of the fields of `desired` (those it sets) that `current` lacks. */
export function changedFields(
  current: Record<string, unknown>,
  desired: Record<string, unknown>,
  compare: Partial<Record<string, (current: unknown, desired: unknown) => boolean>> = {},
): string[] {
  return Object.entries(desired)
    .filter(([name, value]) => value !== undefined && !(compare[name] ?? covers)(current[name], value))
    .map(([name]) => name);
}

export const pick = <T extends Record<string, unknown>>(value: T, names: readonly string[]): Partial<T> =>
  Object.fromEntries(names.map((name) => [name, value[name]])) as Partial<T>;
