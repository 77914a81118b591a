import { AppError } from '../../../lib/errors.js';
import type { TokenUsage } from '../../usage.js';
import type { StreamContext } from '../types.js';

type Json = Record<string, unknown>;

/**
 * The InvokeModel body for an embeddings request. Titan text models (amazon.titan-embed-text-*)
 * take one `inputText` per call; Cohere models (cohere.embed-*) take `texts` with an
 * `input_type` (the client may send `input_type`; default `search_document`).
 */
export function toEmbeddingRequest(body: Json, modelId: string): Json {
  const texts = inputTexts(body.input);
  if (modelId.includes('cohere.embed')) {
    const payload: Json = {
      texts,
      input_type: typeof body.input_type === 'string' ? body.input_type : 'search_document',
    };
    if (typeof body.truncate === 'string') payload.truncate = body.truncate;
    return payload;
  }
  if (modelId.includes('amazon.titan-embed-text')) {
    if (texts.length !== 1)
      throw new AppError(
        'INVALID_REQUEST',
        'Titan text embeddings take one input per request: send a string (or an array of one).',
        { param: 'input' },
      );
    const payload: Json = { inputText: texts[0] };
    // dimensions and normalize exist from v2 on; v1 refuses any field but inputText.
    if (!modelId.includes('titan-embed-text-v1')) {
      if (typeof body.dimensions === 'number') payload.dimensions = body.dimensions;
      if (typeof body.normalize === 'boolean') payload.normalize = body.normalize;
    }
    return payload;
  }
  throw new AppError(
    'INVALID_REQUEST',
    `Embeddings through Bedrock are translated for Titan text (amazon.titan-embed-text-*) and Cohere (cohere.embed-*) models, not '${modelId.slice(0, 200)}'.`,
    { param: 'model' },
  );
}

function inputTexts(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.every((item) => typeof item === 'string')) return input;
  throw new AppError(
    'INVALID_REQUEST',
    'Bedrock embedding models take text: input must be a string or an array of strings (not token ids).',
    { param: 'input' },
  );
}

/**
 * An InvokeModel embeddings answer as an OpenAI embeddings list. Titan reports
 * `inputTextTokenCount`; Cohere reports no token count, so its usage is left out.
 */
export function toEmbeddingResponse(
  raw: unknown,
  ctx: StreamContext,
  encodingFormat: unknown,
): { body: Json; usage: TokenUsage | null } {
  const answer = (typeof raw === 'object' && raw !== null ? raw : {}) as Json;
  let vectors: unknown[] = [];
  if (Array.isArray(answer.embedding)) vectors = [answer.embedding];
  else if (Array.isArray(answer.embeddings)) vectors = answer.embeddings;
  else if (typeof answer.embeddings === 'object' && answer.embeddings !== null)
    vectors = ((answer.embeddings as Json).float as unknown[] | undefined) ?? [];
  const base64 = encodingFormat === 'base64';
  const data = vectors.map((vector, index) => ({
    object: 'embedding',
    index,
    embedding: base64 ? toBase64(vector as number[]) : vector,
  }));
  const body: Json = { object: 'list', data, model: ctx.model ?? '' };
  const tokens = typeof answer.inputTextTokenCount === 'number' ? answer.inputTextTokenCount : null;
  if (tokens === null) return { body, usage: null };
  body.usage = { prompt_tokens: tokens, total_tokens: tokens };
  return { body, usage: { promptTokens: tokens, completionTokens: null, cachedTokens: null, totalTokens: tokens } };
}

/** OpenAI's base64 encoding: the float32 values, little-endian, as base64. */
function toBase64(vector: number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
}
