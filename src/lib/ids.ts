import { randomFillSync, randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();

const v7Bytes = Buffer.alloc(16);
/** Random bytes drawn from the CSPRNG 4 KiB at a time: one call per ~400 ids instead of one per id. */
const entropy = Buffer.alloc(4096);
let entropyUsed = entropy.length;
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
/** The id's text is written here, dashes in place, then read out as one string. */
const uuidText = Buffer.from('00000000-0000-0000-0000-000000000000', 'latin1');

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
  // Written into one buffer and read out once: one string per id, not a hex string, five slices and their joins.
  for (let i = 0, at = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) at++; // past a dash
    const byte = v7Bytes[i]!;
    uuidText[at++] = HEX_DIGITS[byte >> 4]!;
    uuidText[at++] = HEX_DIGITS[byte & 0x0f]!;
  }
  return uuidText.toString('latin1');
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
