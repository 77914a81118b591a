import { createHash } from 'node:crypto';

/**
 * The key id of a JWT caller: a name-based UUID (RFC 9562 version 5) of the issuer and the
 * user claim, in the organisation's namespace. The same user gets the same id on every token,
 * so request logs, analytics by API key, audit records and per-key rate limits name them the
 * way they name keys, and every filter that takes a key id takes this one.
 */
export function jwtCallerId(organisationId: string, issuer: string, subject: string): string {
  const namespace = Buffer.from(organisationId.replaceAll('-', ''), 'hex');
  const bytes = createHash('sha1')
    .update(namespace.length === 16 ? namespace : Buffer.from(organisationId, 'utf8'))
    .update(`jwt\n${issuer}\n${subject}`, 'utf8')
    .digest()
    .subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
