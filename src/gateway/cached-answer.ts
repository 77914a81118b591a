import { performance } from 'node:perf_hooks';
import { replaySse, type CacheLookup, type ResponseCache } from '../cache/index.js';
import type { GatewayReply } from './exchange.js';
import type { GatewayHeaders } from './gateway-headers.js';
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

/** A cache hit: the stored answer (a stream replayed event by event), no provider, no cost. */
export function sendCached(reply: GatewayReply, draft: RequestLogDraft, cache: CacheLookup): unknown {
  const { response } = cache.hit!;
  draft.markFirstByte(performance.now());
  draft.cost = 0;
  if (!response.stream) {
    const parsed = parseJson(response.body) as { model?: unknown } | null;
    if (typeof parsed?.model === 'string') draft.model = parsed.model;
  }
  return reply
    .code(response.status)
    .headers(response.headers)
    .send(response.stream ? replaySse(response.body) : response.body);
}
