/**
 * HTTP for checks: undici with a guard on where it may connect. Names are resolved at
 * connect time by a lookup that refuses private addresses and hands the socket the very
 * address it checked (no second resolution an attacker's DNS could answer differently).
 * IP literals are checked before the request, redirects are followed by hand and every hop
 * is checked again, and bodies are capped while they stream.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { isPrivateAddress } from './address-policy.js';

/** The URL (or an address it resolves to, or a redirect) is one the policy refuses. */
export class RefusedAddressError extends Error {
  override name = 'RefusedAddressError';
}

/** The body is larger than the cap. */
export class TooLargeError extends Error {
  override name = 'TooLargeError';
}

export interface GuardedRequest {
  /** Private, loopback, link-local and unique-local addresses are refused unless true. */
  allowPrivate: boolean;
  /** Hosts (`name` or `name:port`) reached even though private: the operator's own services. */
  allowHosts?: readonly string[] | undefined;
  method?: 'GET' | 'POST' | 'HEAD';
  headers?: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  /** Redirects to follow (each hop checked); 0 makes a redirect an answer like any other. */
  maxRedirects?: number;
  /** Largest body read; a larger one is a TooLargeError. */
  maxBytes?: number;
}

export interface GuardedResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** After redirects. */
  url: string;
}

const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const refused = addresses.find((a) => isPrivateAddress(a.address));
    if (refused || addresses.length === 0)
      return callback(
        new RefusedAddressError(`${hostname} resolves to ${refused?.address ?? 'nothing'}, a private address`),
        '',
        0,
      );
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
};

let agents: { guarded: Agent; open: Agent } | null = null;
function agentFor(allowPrivate: boolean): Dispatcher {
  agents ??= { guarded: new Agent({ connect: { lookup: guardedLookup } }), open: new Agent() };
  return allowPrivate ? agents.open : agents.guarded;
}

/**
 * The URL, and whether it may reach private addresses; throws RefusedAddressError when it
 * may not be fetched at all.
 */
export function checkUrl(
  raw: string | URL,
  allowPrivate: boolean,
  allowHosts: readonly string[] = [],
): { url: URL; open: boolean } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RefusedAddressError(`not a URL: ${String(raw).slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new RefusedAddressError(`only http and https URLs are fetched, not ${url.protocol}`);
  if (url.username || url.password) throw new RefusedAddressError('URLs with credentials are not fetched');
  const open = allowPrivate || allowHosts.includes(url.host) || allowHosts.includes(url.hostname);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!open && isIP(host) !== 0 && isPrivateAddress(host))
    throw new RefusedAddressError(`${host} is a private address`);
  return { url, open };
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export async function guardedFetch(raw: string | URL, init: GuardedRequest): Promise<GuardedResponse> {
  let { url, open } = checkUrl(raw, init.allowPrivate, init.allowHosts);
  let method = init.method ?? 'GET';
  let body = init.body;
  const maxRedirects = init.maxRedirects ?? 3;
  for (let hop = 0; ; hop++) {
    const answer = await request(url, {
      method,
      headers: init.headers ?? {},
      ...(body === undefined ? {} : { body }),
      signal: init.signal,
      dispatcher: agentFor(open),
    });
    const headers = flatHeaders(answer.headers);
    const location = headers.location;
    if (REDIRECTS.has(answer.statusCode) && location !== undefined && maxRedirects > 0) {
      await answer.body.dump();
      if (hop >= maxRedirects) throw new Error(`more than ${maxRedirects} redirects`);
      ({ url, open } = checkUrl(new URL(location, url), init.allowPrivate, init.allowHosts));
      if (
        answer.statusCode === 303 ||
        ((answer.statusCode === 301 || answer.statusCode === 302) && method === 'POST')
      ) {
        method = 'GET';
        body = undefined;
      }
      continue;
    }
    return {
      status: answer.statusCode,
      headers,
      body: await readCapped(answer.body, headers, init.maxBytes),
      url: url.href,
    };
  }
}

function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}

async function readCapped(
  body: Dispatcher.ResponseData['body'],
  headers: Record<string, string>,
  maxBytes: number | undefined,
): Promise<Buffer> {
  const limit = maxBytes ?? Infinity;
  const declared = Number(headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    body.destroy();
    throw new TooLargeError(`the body is ${declared} bytes, more than ${limit}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limit) {
      body.destroy();
      throw new TooLargeError(`the body is more than ${limit} bytes`);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/** The error's own message, or that of a RefusedAddressError it wraps (undici wraps connect errors). */
export function describeFetchError(error: unknown): string {
  for (let e: unknown = error; e instanceof Error; e = e.cause) if (e instanceof RefusedAddressError) return e.message;
  if (error instanceof Error) return error.name === 'AbortError' ? 'aborted (time limit)' : error.message;
  return String(error);
}

export function isRefusal(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) if (e instanceof RefusedAddressError) return true;
  return false;
}
