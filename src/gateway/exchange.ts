import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Principal } from '../auth/principal.js';
import type { EndpointType } from '../providers/endpoints.js';

/**
 * What the pipeline needs of an HTTP exchange. The gateway's routes hand it fastify's request
 * and reply, which have all of this; the pipeline itself depends on no web framework.
 */
export interface GatewayRoute {
  endpointType: EndpointType;
  /** JSON routes are parsed and validated; raw ones (multipart, pass-through) are streamed as they come. */
  body: 'json' | 'raw';
}

export interface GatewayRequest {
  readonly id: string;
  readonly method: string;
  /** The path (normalised) with its query. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The parsed JSON of JSON routes; the body stream of raw ones (which the pipeline may wrap). */
  body: unknown;
  /** The body bytes as received, kept so that an unchanged body is forwarded without re-encoding. */
  readonly rawBody?: Buffer | undefined;
  readonly principal: Principal | null;
  /** Set when the request is a prompt run: what its log record names, and the path the client called. */
  readonly prompt?: PromptUse;
}

/** The prompt a request runs (`POST /v1/prompts/{id}/completions`). */
export interface PromptUse {
  id: string;
  version: number;
  /** The label chosen or carried by the version; null when none. */
  label: string | null;
  path: string;
  /** The prompt's workspace: where an admin key's run is counted and finds its providers. */
  workspaceId: string;
}

export interface GatewayReply {
  readonly raw: ServerResponse;
  readonly statusCode: number;
  code(statusCode: number): GatewayReply;
  header(name: string, value: string): GatewayReply;
  headers(values: Record<string, string | string[] | number>): GatewayReply;
  type(contentType: string): GatewayReply;
  send(payload?: unknown): GatewayReply;
}
