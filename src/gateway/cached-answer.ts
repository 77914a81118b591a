import { performance } from 'node:perf_hooks';
import { replaySse, type CacheLookup, type ResponseCache } from '../cache/index.js';
import type { GatewayReply } from './exchange.js';
import type { GatewayHeaders } from './gateway-headers.js';
import { usageFromBody, type TokenUsage } from '../providers/usage.js';
import { parseJson } from './relay-answer.js';
import type { RequestLogDraft } from './request-log-draft.js';
import type { SelectedConfig } from './routing/config-selector.js';

/**
 * The cache entry for this request, if the config caches: keyed by the request body as sent by
 * the client and by the config version (inline configs by their text), within the namespace.
 */
export function lookUpCache(
  cache: ResponseCache,
  selected: SelectedConfig,
  json: Record<string, unknown>,
  headers: GatewayHeaders,
  organisationId: string,
  workspaceId: string,
  path: string,
): Promise<CacheLookup> {
  const settings = selected.config.cache!;
  const route = selected.id ? `config:${selected.id}@${selected.versionId}` : `inline:${selected.inlineText}`;
  return cache.lookup(
    {
      organisationId,
      workspaceId,
      namespace: headers.cacheNamespace,
      endpoint: path.split('?')[0]!,
      route,
      body: json,
    },
    { mode: settings.mode, maxAgeSeconds: settings.max_age, forceRefresh: headers.cacheForceRefresh },
  );
}

/**
 * The model and usage a cached answer reports: of its JSON body, or of a stream's events (the
 * usage is in the last event that carries one, when the client asked for it).
 */
export function cachedAnswerUsage(body: Buffer, stream: boolean): { model: string | null; usage: TokenUsage | null } {
  const bodies: unknown[] = stream
    ? body
        .toString('utf8')
        .split('\n')
        .filter((line) => line.startsWith('data:') && line.slice(5).trim() !== '[DONE]')
        .map((line) => parseJson(Buffer.from(line.slice(5))))
    : [parseJson(body)];
  let model: string | null = null;
  let usage: TokenUsage | null = null;
  for (const parsed of bodies) {
    const named = (parsed as { model?: unknown } | null)?.model;
    if (typeof named === 'string') model = named;
    usage = usageFromBody(parsed) ?? usage;
  }
  return { model, usage };
}

/** A cache hit: the stored answer (a stream replayed event by event), no provider, no cost. */
export function sendCached(reply: GatewayReply, draft: RequestLogDraft, cache: CacheLookup): unknown {
  const { response } = cache.hit!;
  draft.markFirstByte(performance.now());
  draft.cost = 0;
  const answer = cachedAnswerUsage(response.body, response.stream);
  if (!response.stream && answer.model !== null) draft.model = answer.model;
  draft.replacedCall = { provider: response.provider ?? null, model: answer.model ?? draft.model, usage: answer.usage };
  return reply
    .code(response.status)
    .headers(response.headers)
    .send(response.stream ? replaySse(response.body) : response.body);
}
