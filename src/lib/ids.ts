import { randomFillSync, randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();

const v7Bytes = Buffer.alloc(16);
/** Random bytes drawn from the CSPRNG 4 KiB at a time: one call per ~400 ids instead of one per id. */
const entropy = Buffer.alloc(4096);
let entropyUsed = entropy.length;

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. Rows keyed by these are
 * appended at the end of their indexes instead of landing on random B-tree pages, which keeps
 * inserting request logs cheap as the table grows.
 */
export function newTimeOrderedId(now = Date.now()): string {
  if (entropyUsed + 10 > entropy.length) {
    randomFillSync(entropy);
    entropyUsed = 0;
  }
  entropy.copy(v7Bytes, 6, entropyUsed, entropyUsed + 10);
  entropyUsed += 10;
  v7Bytes.writeUIntBE(now, 0, 6);
  v7Bytes[6] = (v7Bytes[6]! & 0x0f) | 0x70;
  v7Bytes[8] = (v7Bytes[8]! & 0x3f) | 0x80;
  const hex = v7Bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID_RE.test(value);

const SLUG_RE = /[^a-z0-9]+/g;
/** A URL-safe slug from a display name, with a short random tail so that names may repeat. */
export function slugify(name: string): string {
  const base =
    name
      .toLowerCase()
      .replace(SLUG_RE, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'item';
  return `${base}-${randomUUID().slice(0, 6)}`;
}
