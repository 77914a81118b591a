import { ScimError } from './scim-errors.js';

const opaque = (tag: string) => tag.trim().replace(/^W\//, '');

/**
 * If-Match (RFC 7644 §3.14): a change applies only to the version the client last read; `*`
 * matches any. Without the header every change applies, as most providers send none.
 */
export function assertIfMatch(ifMatch: string | undefined, current: string): void {
  if (ifMatch === undefined || ifMatch.trim() === '') return;
  const tags = ifMatch.split(',').map((tag) => tag.trim());
  if (tags.includes('*') || tags.some((tag) => opaque(tag) === opaque(current))) return;
  throw new ScimError(
    'PRECONDITION_FAILED',
    'The resource has changed since the version named in If-Match; read it again.',
  );
}

/** If-None-Match on a read: true when the client already holds the current version (answer 304). */
export function matchesIfNoneMatch(ifNoneMatch: string | undefined, current: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(current));
}
