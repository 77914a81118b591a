import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../../lib/clock.js';

/** How long a signed download link works: long enough to start a download, short enough not to leak for long. */
export const EXPORT_LINK_TTL_MS = 15 * 60_000;

/** What a link's token says when checked. */
export type ExportLinkCheck = 'valid' | 'expired' | 'invalid';

/**
 * Download links of finished exports that work without an API key, as the reference's
 * `signed_url`: the token is `<expiry ms>.<HMAC-SHA256 of export id, its finished_at and the
 * expiry>`, so it opens one export's one finished file until the expiry on the server's clock. A
 * changed or re-run export (a new finished_at) makes earlier links invalid.
 */
export function createExportLinks(deps: { key: Buffer; clock: Clock; ttlMs?: number }) {
  const ttl = deps.ttlMs ?? EXPORT_LINK_TTL_MS;
  const mac = (exportId: string, finishedAt: string, expires: number) =>
    createHmac('sha256', deps.key).update(`${exportId}\n${finishedAt}\n${expires}`).digest();

  return {
    /** A token for the export's file as it is now; expires `ttl` from now. */
    sign(exportId: string, finishedAt: string): { token: string; expiresAt: number } {
      const expiresAt = deps.clock.now() + ttl;
      return { token: `${expiresAt}.${mac(exportId, finishedAt, expiresAt).toString('base64url')}`, expiresAt };
    },

    /** Tampering is checked first (in constant time), so that an expiry cannot be probed with a forged token. */
    check(exportId: string, finishedAt: string, token: string): ExportLinkCheck {
      const match = /^(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(token);
      if (!match) return 'invalid';
      const expires = Number(match[1]);
      const given = Buffer.from(match[2]!, 'base64url');
      const expected = mac(exportId, finishedAt, expires);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
      return deps.clock.now() < expires ? 'valid' : 'expired';
    },
  };
}

export type ExportLinks = ReturnType<typeof createExportLinks>;
