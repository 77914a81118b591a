import { AppError } from '../../../lib/errors.js';
import type { ProviderRequest, StreamContext, TranslatedEndpoint, WireAdapter } from '../types.js';
import { toCohereChat } from './chat-request.js';
import { toChatCompletion } from './chat-response.js';
import { createChatStreamTranslator } from './chat-stream.js';
import type { Json } from './cohere-types.js';
import { toCohereEmbed, toEmbeddingList } from './embed.js';
import { translateCohereError } from './errors.js';
import { toCohereRerank, toRerankResult } from './rerank.js';
import { assertPlainPath, cohereAuthHeaders, cohereBase } from './target.js';

const ENDPOINTS: ReadonlySet<TranslatedEndpoint> = new Set<TranslatedEndpoint>(['chatComplete', 'embed', 'rerank']);
const PATHS: Partial<Record<TranslatedEndpoint, string>> = {
  chatComplete: '/chat',
  embed: '/embed',
  rerank: '/rerank',
};

/**
 * The request body as sent, when the gateway hands it over with the answer: embeddings need
 * its `encoding_format`, rerank its documents. Optional, so the adapter works without it.
 */
type ContextWithRequest = StreamContext & { request?: Json | null };

/** Cohere API v2: chat, embed and rerank translated; any other path passed through with the key. */
export const cohereAdapter: WireAdapter = {
  endpoints: ENDPOINTS,

  async buildRequest(endpoint, body, ctx): Promise<ProviderRequest> {
    const path = PATHS[endpoint];
    if (!path)
      throw new AppError('UNSUPPORTED_ENDPOINT', `Provider ${ctx.provider.name} does not support ${endpoint}.`, {
        param: 'x-service-provider',
      });
    const payload =
      endpoint === 'chatComplete'
        ? toCohereChat(body)
        : endpoint === 'embed'
          ? toCohereEmbed(body)
          : toCohereRerank(body);
    const stream = endpoint === 'chatComplete' && payload.stream === true;
    return {
      url: `${cohereBase(ctx)}${path}`,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: stream ? 'text/event-stream' : 'application/json',
        ...cohereAuthHeaders(ctx),
      },
      body: JSON.stringify(payload),
    };
  },

  toOpenAIResponse(endpoint, body, ctx: ContextWithRequest) {
    if (endpoint === 'embed') return toEmbeddingList(body, ctx.model, ctx.request?.encoding_format);
    if (endpoint === 'rerank') return toRerankResult(body, ctx.request ?? null, ctx.model);
    return toChatCompletion(body, ctx);
  },

  toOpenAIError: translateCohereError,

  createStreamTranslator(_endpoint, ctx) {
    return createChatStreamTranslator(ctx);
  },

  async passThrough(path, method, ctx): Promise<ProviderRequest> {
    assertPlainPath(path);
    const relative = path.startsWith('/') ? path : `/${path}`;
    return {
      url: `${cohereBase(ctx)}${relative}`,
      method: method === 'GET' ? 'GET' : 'POST',
      headers: cohereAuthHeaders(ctx),
      body: null,
    };
  },
};
