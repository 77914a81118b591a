import type { IncomingHttpHeaders } from 'node:http';

/**
 * Headers that describe one hop, not the message (RFC 9110 §7.6.1), plus those the client
 * re-derives, and `expect`: the gateway's own server has already answered a client's
 * `100-continue`, and the body it forwards is complete.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'expect',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

const NO_TOKENS: ReadonlySet<string> = new Set();

function connectionTokens(headers: IncomingHttpHeaders): ReadonlySet<string> {
  const value = headers.connection;
  if (value === undefined || value === 'keep-alive' || value === 'close') return NO_TOKENS;
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  return new Set(
    text
      .split(',')
      .map((t) => t.trim().toLowerCase())
      .filter(Boolean),
  );
}

/**
 * The client's headers as the provider should see them: our own `x-service-*` headers, the
 * client's credentials and hop-by-hop headers removed (the provider's auth is added by the
 * caller). `keepLength` keeps content-length when the body bytes are forwarded unchanged.
 */
export function headersForUpstream(
  incoming: IncomingHttpHeaders,
  options: { keepLength: boolean; keepEncoding: boolean },
): Record<string, string> {
  const dropped = connectionTokens(incoming);
  const out: Record<string, string> = {};
  for (const name in incoming) {
    const value = incoming[name];
    if (value === undefined || HOP_BY_HOP.has(name) || dropped.has(name)) continue;
    if (name.startsWith('x-service-') || name === 'authorization' || name === 'cookie') continue;
    if (name === 'content-length' && !options.keepLength) continue;
    if (name === 'accept-encoding' && !options.keepEncoding) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** Set by this gateway on every answer; a provider (another gateway as custom host) cannot replace it. */
const OWN_HEADERS: ReadonlySet<string> = new Set(['x-service-request-id']);

/** The provider's response headers for the client, without hop-by-hop ones. */
export function headersForClient(
  upstream: IncomingHttpHeaders,
  options: { keepLength: boolean },
): Record<string, string | string[]> {
  const dropped = connectionTokens(upstream);
  const out: Record<string, string | string[]> = {};
  for (const name in upstream) {
    const value = upstream[name];
    if (value === undefined || HOP_BY_HOP.has(name) || dropped.has(name) || OWN_HEADERS.has(name)) continue;
    if (name === 'content-length' && !options.keepLength) continue;
    out[name] = value;
  }
  return out;
}

/** The provider's request ids, under the names providers use (OpenAI, Anthropic, Bedrock, Azure). */
const REQUEST_ID_HEADERS: ReadonlySet<string> = new Set([
  'x-request-id',
  'request-id',
  'x-amzn-requestid',
  'x-amz-request-id',
  'apim-request-id',
]);
const RATE_LIMIT_PREFIXES = ['x-ratelimit-', 'anthropic-ratelimit-'];

/**
 * What a client's SDK needs from a provider's answer when the gateway writes the body itself
 * (errors, translated answers): when to retry (`retry-after`, `retry-after-ms`), the provider's
 * rate-limit state, and its request id for support tickets.
 */
export function providerSignalHeaders(upstream: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(upstream)) {
    if (value === undefined) continue;
    if (
      name === 'retry-after' ||
      name === 'retry-after-ms' ||
      REQUEST_ID_HEADERS.has(name) ||
      RATE_LIMIT_PREFIXES.some((prefix) => name.startsWith(prefix))
    ) {
      out[name] = Array.isArray(value) ? value.join(', ') : value;
    }
  }
  return out;
}
