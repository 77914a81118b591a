import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { Agent, errors, request, type Dispatcher } from 'undici';
import { boundedMemo } from '../lib/bounded-memo.js';
import { AppError } from '../lib/errors.js';
import { UpstreamCall, type ReadPlan } from './upstream-call.js';

export interface UpstreamSettings {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
}

export interface UpstreamRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer | Readable | null;
  signal: AbortSignal;
}

/**
 * One pooled, keep-alive HTTP client for every provider. Connection set-up is the largest cost a
 * proxy can add, so sockets are reused across requests.
 */
export function createUpstreamClient(settings: UpstreamSettings, dispatcher?: Dispatcher) {
  const agent =
    dispatcher ??
    new Agent({
      connect: { timeout: settings.connectTimeoutMs },
      headersTimeout: settings.headersTimeoutMs,
      bodyTimeout: settings.bodyTimeoutMs,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      connections: 256,
    });

  return {
    /**
     * Starts a call to a provider that reads as much of the answer as `plan` says once the status
     * and headers are known; the gateway's attempts use it. Transport failures reject
     * `call.answer` as they come (see `upstreamFailure`).
     */
    call(req: Omit<UpstreamRequest, 'signal'>, plan: (status: number, headers: IncomingHttpHeaders) => ReadPlan) {
      const call = new UpstreamCall(plan, req.body instanceof Readable ? req.body : null, upstreamFailure);
      let where: OriginAndPath;
      try {
        where = originAndPath(req.url);
      } catch (error) {
        call.onError(error as Error);
        return call;
      }
      const { method, headers, body } = req;
      agent.dispatch({ origin: where.origin, path: where.path, method, headers, body }, call);
      return call;
    },
    /** A call whose answer is read as a stream, as soon as its headers are in (agents' calls). */
    async send(req: UpstreamRequest): Promise<Dispatcher.ResponseData> {
      try {
        return await request(req.url, {
          method: req.method,
          headers: req.headers,
          body: req.body,
          signal: req.signal,
          dispatcher: agent,
        });
      } catch (error) {
        throw upstreamFailure(error);
      }
    },
    /** The pooled client itself, for calls that are not relayed requests (token exchanges, embeddings). */
    dispatcher: agent,
    close: () => agent.close(),
  };
}

export type UpstreamClient = ReturnType<typeof createUpstreamClient>;

interface OriginAndPath {
  origin: string;
  path: string;
}

/** A provider URL split for undici: the same few URLs (a provider's base and path) come on every request. */
const originAndPath = boundedMemo(1000, (url: string): OriginAndPath => {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new errors.InvalidArgumentError('Invalid URL protocol: the URL must start with `http:` or `https:`.');
  return Object.freeze({ origin: parsed.origin, path: parsed.pathname + parsed.search });
});

const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

/**
 * Turns a transport failure into the error the client sees: 504 for time-outs, 502 otherwise,
 * also for an answer undici's parser refuses (HTTPParserError, codes `HPE_*`: a malformed
 * status line, header or chunk size), which is the provider's failure, not the gateway's.
 */
export function upstreamFailure(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const code = errorCode(error);
  if (code !== null && TIMEOUT_CODES.has(code)) {
    return new AppError('UPSTREAM_TIMEOUT', `The provider did not answer in time (${code}).`, { cause: error });
  }
  if (code?.startsWith('HPE_') || error instanceof errors.HTTPParserError) {
    // undici 7 leaves the code out (its llhttp constants map names to numbers): the parser's reason says what.
    const reason = code ?? /\(([^()]+)\)$/.exec((error as Error).message)?.[1];
    return new AppError(
      'UPSTREAM_UNREACHABLE',
      `The provider's answer is not valid HTTP/1.1${reason ? ` (${reason})` : ''}.`,
      {
        cause: error,
      },
    );
  }
  return new AppError('UPSTREAM_UNREACHABLE', `The provider could not be reached${code ? ` (${code})` : ''}.`, {
    cause: error,
  });
}

function errorCode(error: unknown): string | null {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return null;
}
