import type { IncomingHttpHeaders } from 'node:http';
import { AppError } from '../../../lib/errors.js';
import type {
  AdapterContext,
  ProviderRequest,
  StreamContext,
  TranslatedEndpoint,
  TranslatedError,
  WireAdapter,
} from '../types.js';
import { toConverseRequest } from './chat-request.js';
import { toChatCompletion } from './chat-response.js';
import { createConverseStreamTranslator } from './chat-stream.js';
import { resolveBedrockTarget, type BedrockTarget } from './credentials.js';
import { toEmbeddingRequest, toEmbeddingResponse } from './embeddings.js';
import { translateBedrockError } from './errors.js';
import { rerankModelArn, toRerankRequest, toRerankResponse } from './rerank.js';
import { loadEventStreamCodec } from './event-stream.js';
import { signRequest } from './sign.js';

/**
 * The context of a JSON answer may say how the client wants embeddings encoded; the OpenAI
 * SDKs ask for base64 unless told otherwise.
 */
type AnswerContext = StreamContext & { encodingFormat?: unknown };

/** AWS Bedrock: Converse / ConverseStream for chat, InvokeModel for embeddings, Agent Runtime Rerank. */
export const bedrockAdapter: WireAdapter = {
  endpoints: new Set<TranslatedEndpoint>(['chatComplete', 'embed', 'rerank']),

  async buildRequest(endpoint, body, ctx) {
    const target = resolveBedrockTarget(ctx);
    const model = typeof body.model === 'string' && body.model !== '' ? body.model : null;
    if (model === null)
      throw new AppError('INVALID_REQUEST', 'Bedrock needs model: a model id, inference profile id or ARN.', {
        param: 'model',
      });
    switch (endpoint) {
      case 'chatComplete': {
        const stream = body.stream === true;
        if (stream) await loadEventStreamCodec();
        const path = `/model/${pathLabel(model)}/${stream ? 'converse-stream' : 'converse'}`;
        return send(target, target.runtimeBase + path, toConverseRequest(body), ctx);
      }
      case 'embed':
        return send(
          target,
          `${target.runtimeBase}/model/${pathLabel(model)}/invoke`,
          toEmbeddingRequest(body, model),
          ctx,
        );
      case 'rerank':
        if (target.auth.kind === 'bearer') {
          throw new AppError(
            'PROVIDER_CONFIG',
            'Bedrock API keys do not work with the Rerank API (Agents for Amazon Bedrock Runtime): give the provider AWS credentials.',
            { param: 'authorization' },
          );
        }
        return send(
          target,
          `${target.agentRuntimeBase}/rerank`,
          toRerankRequest(body, rerankModelArn(model, target.region)),
          ctx,
        );
      default:
        throw new AppError('UNSUPPORTED_ENDPOINT', `Provider bedrock does not support ${endpoint}.`, {
          param: 'x-service-provider',
        });
    }
  },

  toOpenAIResponse(endpoint, body, ctx: AnswerContext) {
    if (endpoint === 'embed') return toEmbeddingResponse(body, ctx, ctx.encodingFormat);
    if (endpoint === 'rerank') return toRerankResponse(body, ctx);
    return toChatCompletion(body, ctx);
  },

  toOpenAIError(status: number, body: Buffer, headers?: IncomingHttpHeaders): TranslatedError {
    return translateBedrockError(status, body, headers);
  },

  createStreamTranslator(_endpoint, ctx) {
    return createConverseStreamTranslator(ctx);
  },

  /** SigV4 signs the body, which pass-through does not hand the adapter: not offered. */
  async passThrough() {
    return null;
  },
};

/** The provider request, headers as the AWS SDKs send them (content-type only), then auth. */
async function send(
  target: BedrockTarget,
  url: string,
  payload: Record<string, unknown>,
  ctx: AdapterContext,
): Promise<ProviderRequest> {
  const body = JSON.stringify(payload);
  const headers = { 'content-type': 'application/json' };
  if (target.auth.kind === 'bearer') {
    return { url, method: 'POST', headers: { ...headers, authorization: `Bearer ${target.auth.token}` }, body };
  }
  const signed = await signRequest({
    url: new URL(url),
    method: 'POST',
    headers,
    body,
    credentials: target.auth.credentials,
    region: target.region!,
    signingDate: new Date(ctx.now()),
  });
  return { url, method: 'POST', headers: signed, body };
}

/** A URI path label the way the AWS SDKs encode it: ':' and '/' of ARNs included. */
function pathLabel(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
