import { AppError } from '../../../lib/errors.js';
import type { TokenUsage } from '../../usage.js';
import { finite, isObject, type CohereUsage, type Json } from './cohere-types.js';

const INPUT_TYPES = new Set(['search_document', 'search_query', 'classification', 'clustering', 'image']);

/**
 * An OpenAI embeddings body as a Cohere `POST /v2/embed` body. Cohere needs `input_type`:
 * the request's own `input_type` when it names one of Cohere's, else `search_document` (what
 * an OpenAI client embedding a corpus means). Floats are always asked for; base64 is made
 * here (the official OpenAI client asks for base64 by default).
 */
export function toCohereEmbed(body: Json): Json {
  if (typeof body.model !== 'string' || body.model.trim() === '') {
    throw new AppError('INVALID_REQUEST', 'model is required: the Cohere embedding model (such as embed-v4.0).', {
      param: 'model',
    });
  }
  const texts = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(texts) || texts.length === 0 || !texts.every((text) => typeof text === 'string')) {
    throw new AppError(
      'INVALID_REQUEST',
      'input must be a string or a non-empty array of strings: Cohere embeds text, not token ids.',
      { param: 'input' },
    );
  }
  let inputType = 'search_document';
  if (body.input_type !== undefined) {
    if (typeof body.input_type !== 'string' || !INPUT_TYPES.has(body.input_type)) {
      throw new AppError('INVALID_REQUEST', `input_type must be one of ${[...INPUT_TYPES].join(', ')}.`, {
        param: 'input_type',
      });
    }
    inputType = body.input_type;
  }
  const out: Json = { model: body.model.trim(), texts, input_type: inputType, embedding_types: ['float'] };
  if (typeof body.dimensions === 'number') out.output_dimension = body.dimensions;
  if (typeof body.truncate === 'string') out.truncate = body.truncate;
  return out;
}

/** Little-endian float32 bytes in base64, the encoding OpenAI uses for `encoding_format: base64`. */
function toBase64(vector: number[]): string {
  const floats = new Float32Array(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}

/** An `embeddings_by_type` answer as an OpenAI embedding list; usage from `meta.billed_units`. */
export function toEmbeddingList(
  body: unknown,
  model: string | null,
  encoding: unknown,
): { body: Json; usage: TokenUsage | null } {
  const response = isObject(body) ? body : {};
  const embeddings = isObject(response.embeddings) ? response.embeddings : {};
  const vectors = Array.isArray(embeddings.float)
    ? (embeddings.float as number[][])
    : Array.isArray(response.embeddings)
      ? (response.embeddings as number[][])
      : [];
  const meta = (isObject(response.meta) ? response.meta : {}) as CohereUsage;
  const prompt = finite(meta.billed_units?.input_tokens) ?? finite(meta.tokens?.input_tokens);
  const usage: TokenUsage | null =
    prompt === null ? null : { promptTokens: prompt, completionTokens: null, cachedTokens: null, totalTokens: prompt };
  return {
    body: {
      object: 'list',
      data: vectors.map((vector, index) => ({
        object: 'embedding',
        index,
        embedding: encoding === 'base64' ? toBase64(vector) : vector,
      })),
      model: model ?? '',
      usage: { prompt_tokens: prompt ?? 0, total_tokens: prompt ?? 0 },
    },
    usage,
  };
}
