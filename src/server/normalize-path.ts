import type { IncomingMessage } from 'node:http';

/**
 * One spelling per path, decided before routing, so that `/v1//chat/completions` or
 * `/v1/chat/completions/` reaches the chat route (with its validation, limits and log) rather
 * than the pass-through, and so that nothing that could climb out of a provider's base URL is
 * ever routed: dot segments, encoded slashes and backslashes, malformed percent-encodings.
 */
export type PathVerdict = { ok: true; url: string } | { ok: false; url: string; reason: string };

const PERCENT = /%(?![0-9A-Fa-f]{2})/;
/** What the usual path lacks: anything that may need collapsing, decoding or refusing. */
const UNUSUAL = /[%\\]|\/\/|\/\.|.\/$/;
const ENCODED_SLASH = /%(2f|5c)/i;

export interface NormalizeOptions {
  /**
   * Paths that may keep encoded slashes and backslashes inside a segment: control-plane paths,
   * whose ids may hold them (a model named `meta-llama%2Fllama-4`) and which are never
   * forwarded. Everywhere else they are refused, since a provider could decode them.
   */
  keepsEncodedSlashes?: (path: string) => boolean;
}

/** The request target with its path normalised (query untouched), or the reason it is refused. */
export function normalizeRequestUrl(raw: string, options: NormalizeOptions = {}): PathVerdict {
  const queryAt = raw.indexOf('?');
  const path = queryAt === -1 ? raw : raw.slice(0, queryAt);
  const query = queryAt === -1 ? '' : raw.slice(queryAt);
  if (!UNUSUAL.test(path)) return { ok: true, url: raw };
  const refuse = (reason: string): PathVerdict => ({ ok: false, url: routableSpelling(path) + query, reason });

  if (path.includes('\\')) return refuse('must not contain backslashes');
  if (PERCENT.test(path)) return refuse('has a malformed percent-encoding');
  if (ENCODED_SLASH.test(path) && !options.keepsEncodedSlashes?.(path))
    return refuse('must not contain encoded slashes (%2F, %5C)');

  const segments = path.split('/');
  for (const segment of segments) {
    let decoded: string;
    try {
      decoded = segment.includes('%') ? decodeURIComponent(segment) : segment;
    } catch {
      return refuse('has a percent-encoding that is not UTF-8');
    }
    if (decoded === '.' || decoded === '..') return refuse("must not contain '.' or '..' segments");
  }

  let normal = path.replace(/\/{2,}/g, '/');
  if (normal.length > 1 && normal.endsWith('/')) normal = normal.slice(0, -1);
  return { ok: true, url: normal + query };
}

/**
 * A refused path is still routed (to find which route's authentication applies and whom to
 * log it for) but it is answered with 400 before anything else runs; escaping every `%` keeps
 * the router from failing on it first.
 */
function routableSpelling(path: string): string {
  return path.replace(/\/{2,}/g, '/').replaceAll('%', '%25');
}

const refusals = new WeakMap<IncomingMessage, string>();

/** fastify's `rewriteUrl`: normalises the path and remembers why a request must be refused. */
export function createUrlRewriter(options: NormalizeOptions = {}): (req: IncomingMessage) => string {
  return (req) => {
    const verdict = normalizeRequestUrl(req.url ?? '/', options);
    if (!verdict.ok) refusals.set(req, verdict.reason);
    return verdict.url;
  };
}

/** Why the path of this request is refused, or null. */
export function pathRefusal(req: IncomingMessage): string | null {
  return refusals.get(req) ?? null;
}
