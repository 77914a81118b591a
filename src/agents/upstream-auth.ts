import type { SecretBox } from '../lib/secret-box.js';

/** How svcgw authenticates to a remote agent: not at all, with custom headers, or with a bearer token. */
export type AgentAuthType = 'none' | 'headers' | 'bearer';
export const AGENT_AUTH_TYPES = ['none', 'headers', 'bearer'] as const satisfies readonly AgentAuthType[];

/** The secret part of an integration, kept sealed (secret box) and never answered. */
export interface AgentAuth {
  headers?: Record<string, string>;
  token?: string;
}

/**
 * Headers svcgw sets itself on calls to an agent, or that would change how the call travels:
 * a custom header may not replace them.
 */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'content-type',
  'accept',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'proxy-authorization',
  'proxy-connection',
  'a2a-version',
  'a2a-extensions',
  'x-a2a-extensions',
]);

/** An HTTP header name (RFC 9110 token). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
/** A header value svcgw will send: visible characters and spaces only (no CR, LF or NUL). */
export const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]{0,8192}$/;

export function sealAuth(box: SecretBox, type: AgentAuthType, auth: AgentAuth): string | null {
  if (type === 'none') return null;
  return box.encrypt(
    JSON.stringify(type === 'headers' ? { headers: auth.headers ?? {} } : { token: auth.token ?? '' }),
  );
}

export function openAuth(box: SecretBox, sealed: string | null): AgentAuth {
  return sealed === null ? {} : (JSON.parse(box.decrypt(sealed)) as AgentAuth);
}

/** The headers that carry an integration's credentials on every call to its agent. */
export function authHeaders(type: AgentAuthType, auth: AgentAuth): Record<string, string> {
  if (type === 'bearer' && auth.token) return { authorization: `Bearer ${auth.token}` };
  if (type === 'headers' && auth.headers)
    return Object.fromEntries(Object.entries(auth.headers).map(([name, value]) => [name.toLowerCase(), value]));
  return {};
}
