import { performance } from 'node:perf_hooks';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { logRefusedRequest, wasHandled } from '../gateway/refused-requests.js';
import type { Clock } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import type { RequestLogWriter } from '../telemetry/request-log-writer.js';
import { pathRefusal } from './normalize-path.js';
import { sentError } from './plugins/errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on data-plane routes: the endpoint type their request log records carry. */
    gateway?: string;
  }
}

export interface RequestGateDeps {
  maxBodyBytes: number;
  clock: Clock;
  logs: RequestLogWriter;
  defaultWorkspaceId: (organisationId: string) => Promise<string>;
}

/**
 * What every request passes before its body is read, on both planes, right after
 * authentication (so that a refusal is logged for the key that made it): the server is not
 * shutting down, the path was not refused by normalisation, the declared length is within
 * `max_body_bytes`. Refusals answer in the one error body and are logged: a gateway request as a
 * request log record, any other as a server log line.
 */
export function registerRequestGate(app: FastifyInstance, deps: RequestGateDeps): void {
  let closing = false;
  // fastify's own 503 while closing has its own body and no log; this one is ours.
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Node's server.close() closes only idle connections; a keep-alive connection with a request
  // in flight would hold shutdown open. Once closing starts, every response asks to close.
  // The hooks every request runs are callback-style: no promise and no extra tick each.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });

  app.addHook('onRequest', (request, _reply, done) => {
    done(closing ? shuttingDown() : refusalOf(request, deps.maxBodyBytes));
  });

  const reached = new WeakSet<FastifyRequest>();
  app.addHook('preHandler', (request, _reply, done) => {
    reached.add(request);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    if (reply.statusCode >= 400) recordRefusal(request, reply);
    done();
  });

  function recordRefusal(request: FastifyRequest, reply: FastifyReply): void {
    const status = reply.statusCode;
    const endpointType = request.routeOptions.config.gateway;
    const principal = request.principal ?? request.verifiedPrincipal;
    const error = sentError(request);
    // The path as routed (normalised), or as sent when that path was itself the refusal.
    const url = pathRefusal(request.raw) ? (request.originalUrl ?? request.url) : request.url;
    const path = url.split('?')[0] ?? url;
    if (endpointType && principal && !wasHandled(request)) {
      const elapsed = reply.elapsedTime;
      logRefusedRequest(deps.logs, deps.defaultWorkspaceId, {
        principal,
        endpointType,
        method: request.method,
        path,
        requestId: request.id,
        status,
        errorCode: error?.code ?? null,
        errorMessage: error?.message ?? null,
        model: modelOf(request.body),
        startedAt: deps.clock.now() - elapsed,
        startedPerf: performance.now() - elapsed,
      });
    }
    if (!reached.has(request)) {
      request.log.info(
        { request_id: request.id, method: request.method, path, status, code: error?.code ?? null },
        'request refused',
      );
    }
  }
}

const shuttingDown = () =>
  new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down; retry on another instance or in a moment.');

/** Why the request is refused before its body is read (a refused path, a declared length over the limit), or undefined. */
function refusalOf(request: FastifyRequest, maxBodyBytes: number): AppError | undefined {
  const refusal = pathRefusal(request.raw);
  if (refusal) return new AppError('INVALID_REQUEST', `The path ${refusal}.`, { param: 'path' });
  const declared = declaredLength(request);
  if (declared !== null && declared > maxBodyBytes) {
    return new AppError(
      'PAYLOAD_TOO_LARGE',
      `The request body (${declared} bytes) is larger than max_body_bytes (${maxBodyBytes}).`,
    );
  }
  return undefined;
}

function modelOf(body: unknown): string | null {
  const model = body !== null && typeof body === 'object' ? (body as { model?: unknown }).model : undefined;
  return typeof model === 'string' ? model : null;
}

function declaredLength(request: FastifyRequest): number | null {
  const header = request.headers['content-length'];
  if (header === undefined) return null;
  const value = Number(header);
  return Number.isFinite(value) ? value : null;
}
