import { AppError } from '../../../lib/errors.js';
import type { AdapterContext } from '../types.js';

/**
 * The API base without a trailing slash. A custom host with a path is used as it is (a
 * private deployment or a proxy); a bare origin gets the default '/v2'.
 */
export function cohereBase(ctx: AdapterContext): string {
  const fallback = ctx.provider.baseUrl ?? 'https://api.cohere.com/v2';
  const custom = ctx.target.customHost;
  if (!custom) return fallback.replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(custom);
  } catch {
    throw new AppError('PROVIDER_CONFIG', 'The custom host is not a valid URL.', { param: 'x-service-custom-host' });
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.search !== '' ||
    url.hash !== '' ||
    url.username !== '' ||
    url.password !== ''
  ) {
    throw new AppError('PROVIDER_CONFIG', `Custom host '${url.origin}' must be a plain http(s) base URL.`, {
      param: 'x-service-custom-host',
    });
  }
  const path = url.pathname.replace(/^\/+|\/+$/g, '');
  return path ? `${url.origin}/${path}` : `${url.origin}${new URL(fallback).pathname.replace(/\/+$/, '')}`;
}

/** Cohere authenticates with `Authorization: Bearer <API key>`; no key, no header (Cohere answers 401). */
export function cohereAuthHeaders(ctx: AdapterContext): Record<string, string> {
  const key = ctx.target.apiKey;
  return key ? { authorization: `Bearer ${key}` } : {};
}

/** Dot segments would let a pass-through path leave the API base with the gateway's credential. */
export function assertPlainPath(path: string): void {
  const pathname = path.split('?', 1)[0] ?? '';
  const unsafe = pathname.includes('\\') || pathname.split('/').some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment));
  if (unsafe)
    throw new AppError('INVALID_REQUEST', `Path '${pathname}' must not contain '.' or '..' segments.`, {
      param: 'path',
    });
}
