import { AppError } from '../../../lib/errors.js';
import type { AdapterContext, AdapterModule, ProviderRequest, TranslatedEndpoint, WireAdapter } from '../types.js';
import { chatToMessages } from './chat-request.js';
import { completionToMessages } from './completion-request.js';
import { translateAnthropicError } from './errors.js';
import { ANTHROPIC_PROVIDER } from './provider.js';
import { anthropicTarget } from './request-target.js';
import { messageProblem, messageToChatCompletion, messageToTextCompletion } from './response.js';
import { createAnthropicStreamTranslator } from './stream-translator.js';

const ENDPOINTS: ReadonlySet<TranslatedEndpoint> = new Set<TranslatedEndpoint>(['chatComplete', 'complete']);

function unsupported(endpoint: TranslatedEndpoint): never {
  throw new AppError('UNSUPPORTED_ENDPOINT', `Provider anthropic does not support ${endpoint}.`, {
    param: 'x-service-provider',
  });
}

/** Chat and legacy completions translated to `POST /v1/messages`; any other path passed through. */
export const anthropicAdapter: WireAdapter = {
  endpoints: ENDPOINTS,
  nativeChatPath: '/messages',

  async buildRequest(endpoint, body, ctx: AdapterContext): Promise<ProviderRequest> {
    if (!ENDPOINTS.has(endpoint)) unsupported(endpoint);
    const messagesBody = endpoint === 'chatComplete' ? chatToMessages(body) : completionToMessages(body);
    const { url, headers } = anthropicTarget('/messages', ctx, { passThrough: false });
    return {
      url,
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(messagesBody),
    };
  },

  toOpenAIResponse(endpoint, body, ctx) {
    if (endpoint === 'chatComplete') return messageToChatCompletion(body, ctx);
    if (endpoint === 'complete') return messageToTextCompletion(body, ctx);
    return unsupported(endpoint);
  },

  answerProblem: (_endpoint, body) => messageProblem(body),

  toOpenAIError: translateAnthropicError,

  createStreamTranslator(endpoint, ctx) {
    if (!ENDPOINTS.has(endpoint)) unsupported(endpoint);
    return createAnthropicStreamTranslator(endpoint === 'chatComplete' ? 'chat' : 'text', ctx);
  },

  /**
   * Native Anthropic routes (`/v1/messages`, `/v1/messages/count_tokens`, `/v1/models`, …)
   * with the provider key as `x-api-key`; the client's own `anthropic-version` is kept.
   */
  async passThrough(path, method, ctx) {
    const { url, headers } = anthropicTarget(path, ctx, { passThrough: true });
    return { url, method: method.toUpperCase(), headers, body: null };
  },
};

export const anthropic: AdapterModule = { providers: [ANTHROPIC_PROVIDER], adapter: anthropicAdapter };
