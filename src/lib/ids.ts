import { randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID_RE.test(value);

const SLUG_RE = /[^a-z0-9]+/g;
/** A URL-safe slug from a display name, with a short random tail so that names may repeat. */
export function slugify(name: string): string {
  const base = name.toLowerCase().replace(SLUG_RE, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'item';
  return `${base}-${randomUUID().slice(0, 6)}`;
}
