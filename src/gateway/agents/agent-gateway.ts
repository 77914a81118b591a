import { performance } from 'node:perf_hooks';
import { Transform, type Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { servedCard } from '../../agents/card.js';
import { userMayCall, type AgentDirectory, type AgentTarget } from '../../agents/directory.js';
import { isRpcProblem, readRpcCall, rpcErrorOf } from '../../agents/json-rpc.js';
import {
  AGENT_ENDPOINT_TYPE,
  CARD_METHODS,
  FORWARDED_ANSWER_HEADERS,
  FORWARDED_REQUEST_HEADERS,
} from '../../agents/protocol.js';
import { publicBaseUrl } from '../../agents/public-url.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { rateHeaders, RateLimitedError, type Admission, type LimitsService } from '../../limits/limits-service.js';
import type { RequestLogWriter } from '../../telemetry/request-log-writer.js';
import type { GatewayReply, GatewayRequest } from '../exchange.js';
import { readGatewayHeaders } from '../gateway-headers.js';
import { markHandled } from '../refused-requests.js';
import { RequestLogDraft } from '../request-log-draft.js';
import { upstreamFailure, type UpstreamClient } from '../upstream-client.js';

export interface AgentGatewayDeps {
  directory: AgentDirectory;
  limits: LimitsService;
  logs: RequestLogWriter;
  clock: Clock;
  upstream: UpstreamClient;
  /** Bytes of each body kept in the log (log_bodies); 0 keeps none. */
  capture: number;
}

export type AgentRequest = GatewayRequest & { readonly protocol: string };

/** Bytes of a JSON answer read to find a JSON-RPC error for the log; a card answer is read whole up to the card limit. */
const INSPECT_BYTES = 64 * 1024;
const MAX_CARD_BYTES = 1024 * 1024;
/** Statuses with which an agent refuses the integration's credentials. */
const REFUSED_CREDENTIALS: ReadonlySet<number> = new Set([401, 403, 407]);

/** One call on its way: what the log record, the limits and the abort need. */
interface Exchange {
  target: AgentTarget;
  draft: RequestLogDraft;
  controller: AbortController;
}

/**
 * The agent gateway: an A2A agent's card and its JSON-RPC endpoint served under
 * /v1/agents/{server}, with svcgw's keys, access checks, rate limits and request logs. Calls are
 * relayed byte for byte (streams as they arrive); only cards are rewritten, so that clients
 * come back through the gateway.
 */
export function createAgentGateway(deps: AgentGatewayDeps) {
  /**
   * Finds the server and takes the request over (from here on it writes its own log record):
   * another organisation's or another workspace's server is not found, like an unknown one.
   */
  async function begin(request: AgentRequest, reply: GatewayReply, agentId: string): Promise<Exchange> {
    const principal = request.principal!;
    const target = await deps.directory.find(principal.organisationId, agentId);
    if (!target || (principal.workspaceId !== null && principal.workspaceId !== target.workspaceId))
      throw notFound(`Agent server ${agentId}`, 'agent');
    markHandled(request);
    const draft = new RequestLogDraft(
      principal,
      target.workspaceId,
      AGENT_ENDPOINT_TYPE,
      request.method,
      request.url.split('?')[0] ?? request.url,
      request.id,
      deps.clock.now(),
      performance.now(),
    );
    draft.provider = 'a2a';
    draft.model = target.slug;
    draft.agentServerId = target.serverId;
    reply.header('x-service-request-id', draft.id);
    const exchange: Exchange = { target, draft, controller: new AbortController() };
    const admission: Admission = { tokenLimits: [], reservation: null, headers: null };
    reply.raw.once('close', () => {
      const finished = reply.raw.writableFinished;
      if (!finished) {
        exchange.controller.abort();
        if (draft.errorCode === null) draft.errorCode = 'CLIENT_CLOSED_REQUEST';
      }
      const status = finished || reply.statusCode >= 400 ? reply.statusCode : 499;
      const endedPerf = performance.now();
      const settled = async () => {
        await deps.limits.settle(admission, null);
        return draft.finish(status, endedPerf);
      };
      deps.logs.enqueueWhenReady(settled());
    });
    try {
      const headers = readGatewayHeaders(request.headers);
      draft.traceId = headers.traceId;
      draft.spanId = headers.spanId;
      draft.parentSpanId = headers.parentSpanId;
      draft.spanName = headers.spanName;
      const keyMetadata = principal.defaults?.metadata;
      let metadata =
        keyMetadata && Object.keys(keyMetadata).length > 0 ? { ...keyMetadata, ...headers.metadata } : headers.metadata;
      if (principal.userLabel) metadata = { ...metadata, _user: principal.userLabel };
      draft.metadata = metadata;
      reply.header('x-service-trace-id', headers.traceId);
      if (!target.integrationUsable)
        throw new AppError(
          'AGENT_ACCESS_DENIED',
          `The agent integration of agent server ${target.slug} is not enabled for its workspace.`,
        );
      if (!userMayCall(target, principal))
        throw new AppError('AGENT_ACCESS_DENIED', `The key's user has no access to agent server ${target.slug}.`);
      const facts = await deps.limits.facts(principal, target.workspaceId, AGENT_ENDPOINT_TYPE, metadata);
      Object.assign(admission, await deps.limits.admitRate(principal, facts));
      if (admission.headers) reply.headers(rateHeaders(admission.headers, deps.clock.now()));
      return exchange;
    } catch (error) {
      throw failed(draft, reply, error);
    }
  }

  /** The headers every call to the agent carries: the protocol's own from the client, then the integration's credentials. */
  function upstreamHeaders(request: AgentRequest, target: AgentTarget, accept: string): Record<string, string> {
    const headers: Record<string, string> = { accept };
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    return { ...headers, ...target.headers };
  }

  return {
    /** GET …/.well-known/agent-card.json: the agent's card, pointing at the gateway. */
    async card(request: AgentRequest, reply: GatewayReply, agentId: string): Promise<unknown> {
      const { target, draft, controller } = await begin(request, reply, agentId);
      try {
        const res = await deps.upstream.send({
          url: target.cardUrl,
          method: 'GET',
          headers: upstreamHeaders(request, target, 'application/json'),
          body: null,
          signal: controller.signal,
        });
        draft.markFirstByte(performance.now());
        const text = await readLimited(res.body, MAX_CARD_BYTES);
        if (res.statusCode !== 200)
          throw new AppError(
            'AGENT_UNAVAILABLE',
            REFUSED_CREDENTIALS.has(res.statusCode)
              ? `The agent refused the credentials of agent integration ${target.integrationSlug} (HTTP ${res.statusCode}); check its auth.`
              : `The agent's card could not be read: the agent answered HTTP ${res.statusCode}.`,
          );
        let card: unknown;
        try {
          card = JSON.parse(text);
        } catch {
          throw new AppError('AGENT_UNAVAILABLE', "The agent's card is not JSON.");
        }
        if (typeof card !== 'object' || card === null || Array.isArray(card))
          throw new AppError('AGENT_UNAVAILABLE', "The agent's card is not a JSON object.");
        const gatewayUrl = `${publicBaseUrl(request.headers, request.protocol)}/v1/agents/${target.slug}`;
        const body = JSON.stringify(
          servedCard(card as Record<string, unknown>, { gatewayUrl, hidden: (id) => target.hiddenSkills.has(id) }),
        );
        draft.responseBytes = Buffer.byteLength(body);
        if (deps.capture > 0) draft.responseBody = body.slice(0, deps.capture);
        return reply
          .code(200)
          .headers(answerHeaders(res.headers, 'application/json'))
          .header('cache-control', 'private, no-cache')
          .send(body);
      } catch (error) {
        throw failed(draft, reply, error);
      }
    },

    /** POST /v1/agents/{server}: one JSON-RPC call, its answer relayed as it comes (SSE included). */
    async call(request: AgentRequest, reply: GatewayReply, agentId: string): Promise<unknown> {
      const { target, draft, controller } = await begin(request, reply, agentId);
      try {
        const bytes = request.rawBody ?? Buffer.alloc(0);
        draft.requestBytes = bytes.length;
        if (deps.capture > 0) draft.requestBody = bytes.subarray(0, deps.capture).toString('utf8');
        const call = readRpcCall(request.body);
        if (isRpcProblem(call)) throw invalid(call.param, call.message);
        draft.rpcMethod = call.method;
        deps.logs.started({
          id: draft.id,
          organisation_id: draft.principal.organisationId,
          workspace_id: target.workspaceId,
          api_key_id: draft.principal.keyId,
          endpoint_type: AGENT_ENDPOINT_TYPE,
          method: draft.method,
          path: draft.path,
          model: target.slug,
          created_at: new Date(draft.startedAt).toISOString(),
        });
        if (call.skillId !== null && target.hiddenSkills.has(call.skillId))
          throw new AppError(
            'AGENT_SKILL_DISABLED',
            `The skill ${call.skillId} is disabled on agent server ${target.slug}.`,
            { param: 'skill_id' },
          );
        if (target.rpcUrl === null)
          throw new AppError(
            'AGENT_UNAVAILABLE',
            `Agent server ${target.slug} has no JSON-RPC endpoint yet${target.syncError ? `: ${target.syncError}` : ''}. Sync its integration (${target.integrationSlug}) or set its rpc_url.`,
          );
        const accept = typeof request.headers.accept === 'string' ? request.headers.accept : 'application/json';
        const res = await deps.upstream.send({
          url: target.rpcUrl,
          method: 'POST',
          headers: { ...upstreamHeaders(request, target, accept), 'content-type': 'application/json' },
          body: bytes,
          signal: controller.signal,
        });
        return relay(request, reply, res, target, draft, CARD_METHODS.has(call.method));
      } catch (error) {
        throw failed(draft, reply, error);
      }
    },
  };

  /** Sends the agent's answer on: a stream as it comes, a card answer rewritten, anything else as it came. */
  async function relay(
    request: AgentRequest,
    reply: GatewayReply,
    res: Dispatcher.ResponseData,
    target: AgentTarget,
    draft: RequestLogDraft,
    carriesCard: boolean,
  ): Promise<unknown> {
    if (REFUSED_CREDENTIALS.has(res.statusCode)) {
      res.body.resume();
      // The agent judged svcgw's credentials, not the caller's key: the operator's to fix, not the client's.
      throw new AppError(
        'AGENT_UNAVAILABLE',
        `The agent refused the credentials of agent integration ${target.integrationSlug} (HTTP ${res.statusCode}); check its auth.`,
      );
    }
    const contentType = String(res.headers['content-type'] ?? 'application/json');
    draft.isStream = contentType.includes('text/event-stream');
    if (res.statusCode >= 400) {
      draft.errorCode = 'UPSTREAM_ERROR';
      draft.errorMessage = `The agent answered HTTP ${res.statusCode}.`;
    }
    if (carriesCard && !draft.isStream && res.statusCode < 400) {
      const text = await readLimited(res.body, MAX_CARD_BYTES);
      draft.markFirstByte(performance.now());
      const gatewayUrl = `${publicBaseUrl(request.headers, request.protocol)}/v1/agents/${target.slug}`;
      const body = withServedCardResult(text, gatewayUrl, target);
      noteAnswer(draft, body);
      draft.responseBytes = Buffer.byteLength(body);
      return reply.code(res.statusCode).headers(answerHeaders(res.headers, contentType)).send(body);
    }
    const counted = countedStream(res.body, draft, deps.capture, !draft.isStream);
    const headers = answerHeaders(res.headers, contentType);
    if (draft.isStream) {
      headers['cache-control'] = 'no-cache';
      headers['x-accel-buffering'] = 'no';
    }
    return reply.code(res.statusCode).headers(headers).send(counted);
  }
}

export type AgentGateway = ReturnType<typeof createAgentGateway>;

/** Records a failure on the log record and returns the error the client gets. */
function failed(draft: RequestLogDraft, reply: GatewayReply, error: unknown): AppError {
  if (error instanceof RateLimitedError) reply.headers(error.headers);
  const failure = error instanceof AppError ? error : upstreamFailure(error);
  draft.errorCode = failure.code;
  draft.errorMessage = failure.message;
  return failure;
}

function answerHeaders(
  upstream: Record<string, string | string[] | undefined>,
  contentType: string,
): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = { 'content-type': contentType };
  for (const name of FORWARDED_ANSWER_HEADERS) {
    const value = upstream[name];
    if (value !== undefined) headers[name] = value;
  }
  return headers;
}

/**
 * The agent's answer on its way to the client, counted, its first bytes kept for the log; a
 * JSON answer's first bytes are read for a JSON-RPC error, which the log names.
 */
function countedStream(body: Readable, draft: RequestLogDraft, capture: number, inspect: boolean): Readable {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let seen = 0;
  const limit = Math.max(capture, inspect ? INSPECT_BYTES : 0);
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (seen === 0) draft.markFirstByte(performance.now());
      seen += chunk.length;
      draft.responseBytes = seen;
      if (keptBytes < limit) {
        const part = chunk.subarray(0, limit - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
      callback(null, chunk);
    },
    flush(callback) {
      const text = Buffer.concat(kept).toString('utf8');
      if (capture > 0) draft.responseBody = text.slice(0, capture);
      if (inspect && seen <= limit) noteAnswer(draft, text);
      callback();
    },
  });
  body.once('error', (error) => {
    if (draft.errorCode === null) {
      const failure = upstreamFailure(error);
      draft.errorCode = failure.code;
      draft.errorMessage = failure.message;
    }
    counted.destroy(error);
  });
  return body.pipe(counted);
}

/** A JSON-RPC error answer is a failed call in the log, whatever its HTTP status. */
function noteAnswer(draft: RequestLogDraft, text: string): void {
  const error = rpcErrorOf(text);
  if (error && draft.errorCode === null) {
    draft.errorCode = 'AGENT_RPC_ERROR';
    draft.errorMessage = `JSON-RPC error ${error.code}: ${error.message}`.slice(0, 1024);
  }
}

/** An extended card in a JSON-RPC answer, rewritten like the public card; any other answer as it came. */
function withServedCardResult(text: string, gatewayUrl: string, target: AgentTarget): string {
  try {
    const answer = JSON.parse(text) as { result?: unknown };
    if (typeof answer.result !== 'object' || answer.result === null || Array.isArray(answer.result)) return text;
    return JSON.stringify({
      ...answer,
      result: servedCard(answer.result as Record<string, unknown>, {
        gatewayUrl,
        hidden: (id) => target.hiddenSkills.has(id),
      }),
    });
  } catch {
    return text;
  }
}

async function readLimited(body: Readable, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      body.destroy();
      throw new AppError('AGENT_UNAVAILABLE', `The agent's answer is larger than ${maxBytes} bytes.`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
