import { Agent, request } from 'undici';
import type { FuzzRequest } from './request.js';
import type { FuzzWorld } from './world.js';

export interface Answer {
  status: number;
  requestId: string | null;
  /** The body text (empty for an event stream). */
  text: string;
  /** Requests the mock provider received while this one ran. */
  upstreamCalls: number;
}

/** One keep-alive pool for the whole suite; nothing waits on a connection a test left open. */
export const fuzzAgent = new Agent({ keepAliveTimeout: 1000, headersTimeout: 30_000, bodyTimeout: 30_000 });

export async function send(world: FuzzWorld, req: FuzzRequest): Promise<Answer> {
  const before = world.mock.requests.length;
  const res = await request(`${world.baseUrl}${req.url}`, {
    method: req.method as 'GET',
    headers: req.headers,
    ...(req.body ? { body: req.body.bytes } : {}),
    dispatcher: fuzzAgent,
  });
  let text = '';
  // The log stream never ends: its body is dropped, every other body is read.
  if (String(res.headers['content-type']).startsWith('text/event-stream') && res.statusCode < 300)
    res.body.on('error', () => undefined).destroy();
  else text = await res.body.text();
  const id = res.headers['x-request-id'];
  return {
    status: res.statusCode,
    requestId: typeof id === 'string' ? id : null,
    text,
    upstreamCalls: world.mock.requests.length - before,
  };
}

const ERROR_KEYS = ['code', 'message', 'param', 'type'];

/** Why `text` is not the one error body `{"error":{message,type,param,code}}`, or null. */
export function errorBodyProblem(text: string): string | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  if (typeof body !== 'object' || body === null || Object.keys(body).join() !== 'error') return 'not {"error": …}';
  const error = (body as { error: Record<string, unknown> }).error;
  if (typeof error !== 'object' || error === null) return '"error" is not an object';
  const keys = Object.keys(error).sort();
  if (keys.join() !== ERROR_KEYS.join()) return `error keys are ${keys.join(',')}`;
  if (typeof error.message !== 'string' || typeof error.type !== 'string' || typeof error.code !== 'string')
    return 'message, type or code is not a string';
  if (error.param !== null && typeof error.param !== 'string') return 'param is neither a string nor null';
  return null;
}

/**
 * Property 1: never a 5xx for client input. The one exception is the mock provider failing on
 * an input a real provider would refuse (`dimensions: 2^53`): the gateway rightly relays it.
 */
export function serverErrorProblem(answer: Answer): string | null {
  if (answer.status < 500) return null;
  if (answer.upstreamCalls > 0 && answer.text.includes('mock failure')) return null;
  return `answered ${answer.status}`;
}

/** Why `text` is not the SCIM error body `{"schemas": [Error URN], "status": "<status>", "detail"}`, or null. */
export function scimErrorBodyProblem(text: string, status: number): string | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  const scim = body as { schemas?: unknown; status?: unknown; detail?: unknown };
  if (!Array.isArray(scim.schemas) || scim.schemas[0] !== 'urn:ietf:params:scim:api:messages:2.0:Error')
    return 'not the SCIM error schema';
  if (scim.status !== String(status)) return `status is ${JSON.stringify(scim.status)}`;
  return typeof scim.detail === 'string' ? null : 'detail is not a string';
}

/**
 * Property 2: every refusal carries the one error body and an x-request-id (a provider's own
 * error body is relayed as sent; the SCIM protocol routes answer in the SCIM error schema).
 */
export function refusalShapeProblem(req: FuzzRequest, answer: Answer): string | null {
  if (answer.status < 400) return null;
  if (!answer.requestId) return 'no x-request-id header';
  if (req.method === 'HEAD' || answer.upstreamCalls > 0) return null;
  const problem = req.url.startsWith('/v1/scim/v2/')
    ? scimErrorBodyProblem(answer.text, answer.status)
    : errorBodyProblem(answer.text);
  return problem ? `error body ${problem}` : null;
}

/** Property 3: a body the server must refuse is refused, before any provider is called. */
export function invalidBodyProblem(req: FuzzRequest, answer: Answer): string | null {
  if (!req.mustRefuse) return null;
  if (answer.upstreamCalls > 0)
    return `an invalid body reached the provider (${answer.upstreamCalls} call(s)), answered ${answer.status}`;
  if (answer.status < 400) return `an invalid body was accepted (${answer.status})`;
  return null;
}

/** Tenant walls: the workspace key gets nothing done on another workspace's resource. */
export function tenantProblem(req: FuzzRequest, answer: Answer): string | null {
  return req.caller === 'workspace' && req.foreignResource && answer.status < 300
    ? `the workspace key reached another workspace's resource (${answer.status})`
    : null;
}

/**
 * No stored provider key and no caller's API key ever comes back in an answer. A provider's
 * answer is relayed as sent (the mock echoes what it received on pass-through paths), so there
 * only the callers' keys count: an svcgw key must never be forwarded to a provider.
 */
export function secretProblem(world: FuzzWorld, answer: Answer): string | null {
  const secrets = answer.upstreamCalls > 0 ? world.callerKeys : [...world.providerSecrets, ...world.callerKeys];
  const echoed = secrets.find((secret) => answer.text.includes(secret));
  return echoed ? `the answer contains the secret ${echoed.slice(0, 6)}…` : null;
}

/** A readable counterexample: method, path, caller, body (cut), status, the body seen. */
export function describe(req: FuzzRequest, answer: Answer | null, problem: string): string {
  const body = req.body
    ? `${req.bodyLabel}: ${req.body.bytes.subarray(0, 300).toString('utf8')}${req.body.bytes.length > 300 ? `… (${req.body.bytes.length} bytes)` : ''}`
    : 'no body';
  const seen = answer ? `${answer.status} ${answer.text.slice(0, 300)}` : 'no answer';
  return `${problem}\n  ${req.caller} ${req.method} ${req.url.slice(0, 300)}${req.url.length > 300 ? `… (${req.url.length} chars)` : ''}\n  headers: ${JSON.stringify(Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'x-service-api-key' && k !== 'authorization')))}\n  body: ${body}\n  seen: ${seen}`;
}
