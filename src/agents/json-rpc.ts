/** One JSON-RPC request as the agent gateway reads it: enough to log, limit and check it. */
export interface RpcCall {
  method: string;
  /** The skill the message names in its metadata (`skill_id` or `skillId`), if any. */
  skillId: string | null;
}

export type RpcProblem = { param: string; message: string };

const MAX_METHOD = 128;

/**
 * Reads the method of a JSON-RPC 2.0 request. A2A sends one request per HTTP request, so a
 * batch (an array) is refused rather than half understood.
 */
export function readRpcCall(body: unknown): RpcCall | RpcProblem {
  if (Array.isArray(body))
    return { param: 'body', message: 'Send one JSON-RPC request per HTTP request; A2A does not use batches.' };
  if (typeof body !== 'object' || body === null)
    return { param: 'body', message: 'The body must be a JSON-RPC 2.0 request object.' };
  const request = body as Record<string, unknown>;
  if (request.jsonrpc !== '2.0') return { param: 'jsonrpc', message: 'jsonrpc must be "2.0".' };
  const method = request.method;
  if (typeof method !== 'string' || method.length === 0 || method.length > MAX_METHOD)
    return { param: 'method', message: `method must be a string of 1 to ${MAX_METHOD} characters.` };
  if ('id' in request && !['string', 'number'].includes(typeof request.id) && request.id !== null)
    return { param: 'id', message: 'id must be a string, a number or null.' };
  return { method, skillId: skillNamed(request.params) };
}

export const isRpcProblem = (value: RpcCall | RpcProblem): value is RpcProblem => 'param' in value;

/** A2A routes by message, not by skill; a client that wants one names it in the metadata of the message or the call. */
function skillNamed(params: unknown): string | null {
  if (typeof params !== 'object' || params === null) return null;
  const { message, metadata } = params as { message?: unknown; metadata?: unknown };
  const messageMetadata =
    typeof message === 'object' && message !== null ? (message as { metadata?: unknown }).metadata : undefined;
  for (const source of [messageMetadata, metadata]) {
    if (typeof source !== 'object' || source === null) continue;
    const { skill_id: snake, skillId: camel } = source as { skill_id?: unknown; skillId?: unknown };
    const named = typeof snake === 'string' ? snake : typeof camel === 'string' ? camel : null;
    if (named !== null) return named;
  }
  return null;
}

/**
 * The error of a JSON-RPC answer, read from its first bytes (logs name it): `{code, message}`
 * or null when the answer is a result, or is not JSON-RPC.
 */
export function rpcErrorOf(text: string): { code: number; message: string } | null {
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    const error = parsed.error;
    if (typeof error !== 'object' || error === null) return null;
    return {
      code: typeof error.code === 'number' ? error.code : 0,
      message: typeof error.message === 'string' ? error.message : '',
    };
  } catch {
    return null;
  }
}
