import type { Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import type { TokenUsage } from '../usage.js';
import type { EndpointType } from '../endpoints.js';
import type { ProviderDefinition, TargetContext } from '../types.js';

/** The unified endpoints an adapter may translate; any other path goes through `passThrough`. */
export type TranslatedEndpoint = Extract<EndpointType, 'chatComplete' | 'complete' | 'embed' | 'rerank'>;

/** Everything an adapter knows about the target of one request. */
export interface AdapterContext {
  provider: ProviderDefinition;
  /** Credential and host as resolved: `apiKey`, `customHost`, Azure fields, stored `configurations`. */
  target: TargetContext;
  /** Gateway config options of the target (`anthropic_beta`, `azure_entra_scope`). */
  options: { anthropicBeta?: string | undefined; azureEntraScope?: string | undefined };
  /** The client's request headers, for provider-specific ones (`x-service-aws-region`, …). */
  headers: IncomingHttpHeaders;
  /** The gateway's HTTP client, for token exchanges (Vertex service accounts, Entra ID). */
  dispatcher: Dispatcher;
  now: () => number;
}

/** One HTTP request to the provider, ready to send. */
export interface ProviderRequest {
  url: string;
  /** Translated requests are POSTs; pass-through keeps the client's method. */
  method: string;
  headers: Record<string, string>;
  body: Buffer | string | null;
}

/** An OpenAI-shaped error for the client; `status` is the provider's status unless remapped. */
export interface TranslatedError {
  status: number;
  message: string;
  type?: string | undefined;
  code?: string | undefined;
}

/**
 * Turns a provider's stream (its own framing: SSE, AWS event-stream, …) into OpenAI
 * `chat.completion.chunk` server-sent events. Each call returns complete SSE event texts
 * (`data: {...}\n\n`), ready to write to the client.
 */
export interface StreamTranslator {
  push(chunk: Buffer): string[];
  /** The provider's stream ended: final events. `data: [DONE]\n\n` only when no error was seen. */
  end(): string[];
  /** Usage as the provider reported it, once it has (for logs, cost and limits). */
  readonly usage: TokenUsage | null;
  /** Set when the provider reported an error inside the stream (an error event was emitted, never [DONE]). */
  readonly error: { message: string; code?: string | undefined } | null;
}

export interface StreamContext {
  /** The model the client asked for (after override_params). */
  model: string | null;
  /** `stream_options.include_usage` was set: the last chunk carries `usage`. */
  includeUsage: boolean;
  /** An id for the `chatcmpl-…` chunks, stable over the stream. */
  id: string;
  /** Seconds since the epoch, for `created`. */
  created: number;
  /** The OpenAI-shaped request as sent (after override_params): `encoding_format`, `return_documents`, … */
  request?: Readonly<Record<string, unknown>> | null;
}

/**
 * A provider wire format: how an OpenAI-shaped request becomes the provider's request, and how
 * its answers, streams and errors come back in the OpenAI shape.
 */
export interface WireAdapter {
  /** Unified endpoints this adapter translates for the providers that use it. */
  readonly endpoints: ReadonlySet<TranslatedEndpoint>;
  /**
   * The provider's own chat path (Anthropic's `/messages`): clients that call it through
   * pass-through get its answer untouched, and the gateway reads the usage of that answer
   * with this adapter's chat translation, for the log, the cost and the budgets.
   */
  readonly nativeChatPath?: string;
  buildRequest(
    endpoint: TranslatedEndpoint,
    body: Record<string, unknown>,
    ctx: AdapterContext,
  ): Promise<ProviderRequest>;
  /** A 2xx body (parsed JSON) in the OpenAI shape, with usage read from the provider's own fields. */
  toOpenAIResponse(
    endpoint: TranslatedEndpoint,
    body: unknown,
    ctx: StreamContext,
  ): { body: Record<string, unknown>; usage: TokenUsage | null };
  /**
   * What is wrong with a 2xx body (a JSON object) that cannot be this provider's answer, in a few
   * words; null when it can be. Such an answer fails its attempt, so a config can fall back.
   */
  answerProblem?(endpoint: TranslatedEndpoint, body: Readonly<Record<string, unknown>>): string | null;
  /** `headers` are the provider's response headers (some name the error there, such as `x-amzn-errortype`). */
  toOpenAIError(status: number, body: Buffer, headers?: IncomingHttpHeaders): TranslatedError;
  createStreamTranslator(endpoint: TranslatedEndpoint, ctx: StreamContext): StreamTranslator;
  /**
   * Pass-through (any other path, forwarded unchanged): the URL and auth headers for `path`
   * (relative to the provider's versioned base, may carry a query). Null: pass-through is not
   * offered for this provider (for example when signing needs the whole body).
   */
  passThrough?(path: string, method: string, ctx: AdapterContext): Promise<ProviderRequest | null>;
}

/** A wire format's providers and its adapter, as a folder under src/providers/adapters/ exports them. */
export interface AdapterModule {
  providers: ProviderDefinition[];
  adapter: WireAdapter | null;
}
