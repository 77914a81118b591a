import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

/** What identifies a request to the cache; the caller builds it from the final request. */
export interface CacheRequest {
  organisationId: string;
  /** Null for requests made without a workspace (organisation keys). */
  workspaceId: string | null;
  /** `x-service-cache-namespace`, or null for the default namespace. */
  namespace: string | null;
  /** The gateway path, e.g. '/v1/chat/completions'. */
  endpoint: string;
  /**
   * Where the request goes: config id and version, or provider and host. Two routes that could
   * answer differently never share entries.
   */
  route: string;
  /** The final request body (after override_params): parsed JSON, or raw bytes for other bodies. */
  body: unknown;
}

/** Bump when the key material changes shape, so that old entries simply stop matching. */
const KEY_VERSION = 'k1';

const hash = (text: string | Buffer): string => createHash('sha256').update(text).digest('base64url');

function scope(req: CacheRequest): Array<string | number> {
  return [KEY_VERSION, req.organisationId, req.workspaceId ?? '', req.namespace ?? '', req.endpoint, req.route];
}

function bodyMaterial(body: unknown): string {
  return Buffer.isBuffer(body) ? `bytes:${hash(body)}` : `json:${canonicalJson(body)}`;
}

/**
 * The exact-match key: scope + canonical body. `stream` stays in the body, so a streamed
 * request only ever meets a streamed answer and a JSON request a JSON answer.
 */
export function exactCacheKey(req: CacheRequest): string {
  return hash(`${JSON.stringify(scope(req))}\n${bodyMaterial(req.body)}`);
}

/** The part of a chat request a semantic lookup compares by meaning, and the part it needs equal. */
export interface SemanticSplit {
  /** Text of the last message (a user message): what gets embedded. */
  text: string;
  /** Hash of scope + embedding model + the body with the last message's content removed. */
  partitionKey: string;
}

/**
 * Splits a chat completion body for semantic matching, or returns null when the request does
 * not qualify: not a JSON object with `messages`, last message not from the user, or its
 * content not plain text (an image or audio part must match exactly, not by a text embedding).
 * Every earlier message, every other parameter and the last message's other fields stay in
 * the partition key, so a semantic hit only ever answers the same conversation so far.
 */
export function splitForSemantic(req: CacheRequest, embeddingModel: string): SemanticSplit | null {
  const body = req.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) return null;
  const given = (body as { messages?: unknown }).messages;
  if (!Array.isArray(given) || given.length === 0) return null;
  const messages: unknown[] = given;
  const last: unknown = messages[messages.length - 1];
  if (last === null || typeof last !== 'object' || (last as { role?: unknown }).role !== 'user') return null;
  const text = messageText((last as { content?: unknown }).content);
  if (text === null || text.trim() === '') return null;
  const { content: _content, ...lastWithoutContent } = last as Record<string, unknown>;
  const rest = { ...(body as Record<string, unknown>), messages: [...messages.slice(0, -1), lastWithoutContent] };
  return {
    text,
    partitionKey: hash(`${JSON.stringify(['semantic', ...scope(req), embeddingModel])}\n${canonicalJson(rest)}`),
  };
}

/** A string content, or an array of text parts joined by newlines; null when any part is not text. */
function messageText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  const texts: string[] = [];
  for (const part of content) {
    if (part === null || typeof part !== 'object' || (part as { type?: unknown }).type !== 'text') return null;
    const text = (part as { text?: unknown }).text;
    if (typeof text !== 'string') return null;
    texts.push(text);
  }
  return texts.length > 0 ? texts.join('\n') : null;
}
