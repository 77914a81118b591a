const SEGMENT = /^[A-Za-z0-9_-]+$/;
/** Far above any real token, far below the header size limit; longer values are not treated as JWTs. */
const MAX_TOKEN_LENGTH = 8192;

/**
 * Whether a credential is a JWT rather than an svcgw key or a provider key: three base64url
 * segments whose first decodes to a JSON object with a string `alg`. svcgw keys (`svc-…`) have
 * no dots, and provider keys in `Authorization` are only read as JWTs when no
 * `x-service-api-key` is sent (see bearer-key.ts), so both keep their meaning.
 */
export function looksLikeJwt(token: string): boolean {
  if (token.length > MAX_TOKEN_LENGTH) return false;
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((part) => SEGMENT.test(part))) return false;
  try {
    const header: unknown = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && typeof (header as { alg?: unknown }).alg === 'string';
  } catch {
    return false;
  }
}
