import { AppError } from '../../../lib/errors.js';
import type { AdapterContext, ProviderRequest, StreamContext, TranslatedEndpoint, WireAdapter } from '../types.js';
import { toGenerateContentRequest } from './chat-request.js';
import { toChatCompletion } from './chat-response.js';
import { createChatStreamTranslator } from './chat-stream.js';
import { geminiEmbedCall, toEmbeddingList, vertexEmbedCall } from './embeddings.js';
import { translateGoogleError } from './errors.js';
import type { Json } from './gemini-types.js';
import { geminiTarget, vertexModelTarget, vertexPassThroughTarget, type Target } from './target.js';
import { createTokenCache, type TokenCache } from './vertex-auth.js';

const ENDPOINTS: ReadonlySet<TranslatedEndpoint> = new Set<TranslatedEndpoint>(['chatComplete', 'embed']);

const isVertex = (ctx: AdapterContext) => ctx.provider.wireFormat === 'vertex-ai';

/** The model id for the URL: a `models/` (or Vertex `publishers/google/models/`) prefix is accepted and dropped. */
function modelId(body: Json): string {
  if (typeof body.model !== 'string' || body.model.trim() === '') {
    throw new AppError('INVALID_REQUEST', 'model is required: the Gemini model to call (such as gemini-2.5-flash).', {
      param: 'model',
    });
  }
  return body.model.trim().replace(/^(?:publishers\/google\/)?models\//, '');
}

/**
 * One adapter for both Google wire formats: the Gemini API and Vertex AI share the
 * `generateContent` body and answers; they differ in URL, authentication and embeddings.
 * The token cache is injectable so that tests control it.
 */
export function createGoogleAdapter(options: { tokenCache?: TokenCache } = {}): WireAdapter {
  const tokenCache = options.tokenCache ?? createTokenCache();

  const modelTarget = (ctx: AdapterContext, model: string, method: string): Promise<Target> | Target => {
    const path = `/models/${encodeURIComponent(model)}:${method}`;
    return isVertex(ctx) ? vertexModelTarget(ctx, path, tokenCache) : geminiTarget(ctx, path);
  };

  return {
    endpoints: ENDPOINTS,

    async buildRequest(endpoint, body, ctx): Promise<ProviderRequest> {
      const model = modelId(body);
      let method: string;
      let payload: Json;
      if (endpoint === 'chatComplete') {
        method = body.stream === true ? 'streamGenerateContent?alt=sse' : 'generateContent';
        payload = toGenerateContentRequest(body, { requireFileMimeType: isVertex(ctx) });
      } else if (endpoint === 'embed') {
        const call = isVertex(ctx) ? vertexEmbedCall(body) : geminiEmbedCall(body, model);
        method = call.method;
        payload = call.body;
      } else {
        throw new AppError('UNSUPPORTED_ENDPOINT', `Provider ${ctx.provider.name} does not support ${endpoint}.`, {
          param: 'x-service-provider',
        });
      }
      const target = await modelTarget(ctx, model, method);
      return {
        url: target.url,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...target.headers },
        body: JSON.stringify(payload),
      };
    },

    toOpenAIResponse(endpoint, body, ctx: StreamContext) {
      return endpoint === 'embed' ? toEmbeddingList(body, ctx.model) : toChatCompletion(body, ctx);
    },

    toOpenAIError: translateGoogleError,

    createStreamTranslator(_endpoint, ctx) {
      return createChatStreamTranslator(ctx);
    },

    async passThrough(path, method, ctx): Promise<ProviderRequest> {
      const target = isVertex(ctx) ? await vertexPassThroughTarget(ctx, path, tokenCache) : geminiTarget(ctx, path);
      return { url: target.url, method: method === 'GET' ? 'GET' : 'POST', headers: target.headers, body: null };
    },
  };
}
