import { request, type Dispatcher } from 'undici';
import type { Logger } from '../telemetry/logger.js';

export interface EmbeddingClientOptions {
  /** OpenAI-compatible base URL ending in /v1. */
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
  /** A lookup waits at most this long for the embedding, then goes on as a miss. */
  timeoutMs: number;
  dispatcher?: Dispatcher;
  logger: Logger;
}

/** Returns the embedding of a text, or null when the model could not give one (logged). */
export type EmbedText = (text: string) => Promise<number[] | null>;

/**
 * Calls `POST {baseUrl}/embeddings` with `{model, input}` and reads `data[0].embedding` of the
 * `{object: 'list', data: [{object: 'embedding', embedding, index}], model, usage}` answer.
 * Failures never fail the request: the cache just does not answer semantically.
 */
export function createEmbeddingClient(options: EmbeddingClientOptions): EmbedText {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/embeddings`;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  let failures = 0;

  const fail = (reason: Record<string, unknown>): null => {
    if (failures++ % 100 === 0)
      options.logger.warn({ ...reason, failures, model: options.model }, 'semantic cache: embedding request failed');
    return null;
  };

  return async (text) => {
    try {
      const res = await request(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: options.model, input: text }),
        signal: AbortSignal.timeout(options.timeoutMs),
        ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
      });
      if (res.statusCode < 200 || res.statusCode >= 300) {
        await res.body.dump();
        return fail({ status: res.statusCode });
      }
      const vector = firstEmbedding(await res.body.json());
      return vector ?? fail({ reason: 'no embedding in the answer' });
    } catch (error) {
      return fail({
        reason: error instanceof Error ? error.name : 'error',
        code: (error as { code?: unknown } | null)?.code,
      });
    }
  };
}

function firstEmbedding(json: unknown): number[] | null {
  const data = (json as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return null;
  const first = (data.find((item) => (item as { index?: unknown })?.index === 0) ?? data[0]) as
    { embedding?: unknown } | undefined;
  const embedding = first?.embedding;
  if (
    !Array.isArray(embedding) ||
    embedding.length === 0 ||
    !embedding.every((v) => typeof v === 'number' && Number.isFinite(v))
  )
    return null;
  return embedding as number[];
}
