import { FatalError } from '../fatal-error.js';

export interface Connection {
  baseUrl: string;
  apiKey: string;
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  /** Milliseconds before the request is given up; none for streams. */
  timeoutMs?: number | null;
  signal?: AbortSignal;
}

/** Codes of connection failures, which mean the server was never reached. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);
const DEFAULT_TIMEOUT_MS = 60_000;

/** `http://host:8787`, `http://host:8787/` and `http://host:8787/v1` all name the same server. */
export function normaliseBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new FatalError(
      `the base URL ${JSON.stringify(raw)} is not a URL (expected something like http://127.0.0.1:8787)`,
      2,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new FatalError(`the base URL ${raw} must start with http:// or https://`, 2);
  return `${url.origin}${url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')}`;
}

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Turns a fetch failure into the message a person can act on. */
export function networkError(baseUrl: string, error: unknown): FatalError {
  const name = (error as Error | undefined)?.name;
  if (name === 'TimeoutError') return new FatalError(`the server at ${baseUrl} did not answer in time`);
  const code = errorCode(error);
  if (code === undefined || UNREACHABLE.has(code))
    return new FatalError(
      `cannot reach the server at ${baseUrl}${code ? ` (${code})` : ''}: is svcgw serve running there? Check --base-url or SVCGW_BASE_URL.`,
    );
  return new FatalError(`request to ${baseUrl} failed: ${(error as Error).message} (${code})`);
}

/** The server's error body `{error: {message, code}}` as one line for stderr. */
export function serverError(baseUrl: string, status: number, body: unknown): FatalError {
  const err = (body as { error?: { message?: unknown; code?: unknown } } | null)?.error;
  const message = typeof err?.message === 'string' ? err.message : `HTTP ${status}`;
  const code = typeof err?.code === 'string' ? err.code : null;
  if (status === 401 && (code === 'SESSION_EXPIRED' || code === 'INVALID_SESSION'))
    return Object.assign(new FatalError(`the session was refused by ${baseUrl}: ${message}`), { status });
  if (status === 401)
    return Object.assign(
      new FatalError(
        `the API key was refused by ${baseUrl}: ${message} Check --api-key, SVCGW_API_KEY or the profile of svcgw login.`,
      ),
      { status },
    );
  // The status stays on the error for callers that retry what a restart explains (5xx) only.
  return Object.assign(new FatalError(`${message} (HTTP ${status}${code ? ` ${code}` : ''})`), { status });
}

export function buildUrl(baseUrl: string, path: string, query: Query = {}): string {
  const url = new URL(`${baseUrl}${path}`);
  for (const [key, value] of Object.entries(query))
    if (value !== undefined && value !== '') url.searchParams.set(key, String(value));
  return url.toString();
}

/**
 * The CLI's client of the admin API. Every failure becomes a FatalError (exit 1) whose message
 * is the server's own, or says that the server could not be reached.
 */
export function createClient(connection: Connection) {
  const { baseUrl, apiKey } = connection;

  async function send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { 'x-service-api-key': apiKey, accept: 'application/json' };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const timeout =
      options.timeoutMs === null ? undefined : AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const signal = timeout && options.signal ? AbortSignal.any([timeout, options.signal]) : (timeout ?? options.signal);
    try {
      return await fetch(buildUrl(baseUrl, path, options.query), {
        method,
        headers,
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      throw networkError(baseUrl, error);
    }
  }

  async function request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const res = await send(method, path, options);
    const text = await res.text().catch((error: unknown) => {
      throw networkError(baseUrl, error);
    });
    let body: unknown = null;
    if (text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        throw new FatalError(
          `the server at ${baseUrl} answered HTTP ${res.status} with something other than JSON: is it svcgw?`,
        );
      }
    }
    if (!res.ok) throw serverError(baseUrl, res.status, body);
    return body as T;
  }

  return {
    baseUrl,
    request,
    get: <T = unknown>(path: string, query?: Query) => request<T>('GET', path, query ? { query } : {}),
    post: <T = unknown>(path: string, body: unknown = {}) => request<T>('POST', path, { body }),
    put: <T = unknown>(path: string, body: unknown = {}) => request<T>('PUT', path, { body }),
    delete: <T = unknown>(path: string, query?: Query) => request<T>('DELETE', path, query ? { query } : {}),
    /** Opens a long-lived response (server-sent events); the caller reads its body. */
    async stream(path: string, query: Query, signal: AbortSignal): Promise<Response> {
      const res = await send('GET', path, { query, signal, timeoutMs: null });
      if (!res.ok) {
        const body: unknown = await res.json().catch(() => null);
        throw serverError(baseUrl, res.status, body);
      }
      return res;
    },
  };
}

export type Client = ReturnType<typeof createClient>;
