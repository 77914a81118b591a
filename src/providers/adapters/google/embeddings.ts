import type { TokenUsage } from '../../usage.js';
import { AppError } from '../../../lib/errors.js';
import { isObject, type Json } from './gemini-types.js';

export interface EmbedCall {
  /** The method after the model in the URL: `embedContent`, `batchEmbedContents` or `predict`. */
  method: string;
  body: Json;
}

function textInputs(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.every((item): item is string => typeof item === 'string')) return input;
  throw new AppError(
    'INVALID_REQUEST',
    'Gemini embeds text: input must be a string or an array of strings (token arrays are not supported).',
    { param: 'input' },
  );
}

/**
 * An OpenAI embeddings body for the Gemini API: one string goes to `embedContent`, an array to
 * `batchEmbedContents` (whose requests must each name the model). `dimensions` becomes
 * `outputDimensionality`; `task_type` (an extension) becomes `taskType`.
 */
export function geminiEmbedCall(body: Json, model: string): EmbedCall {
  const inputs = textInputs(body.input);
  const options: Json = {};
  if (typeof body.dimensions === 'number') options.outputDimensionality = body.dimensions;
  if (typeof body.task_type === 'string') options.taskType = body.task_type;
  const request = (text: string): Json => ({ content: { parts: [{ text }] }, ...options });
  if (typeof body.input === 'string') return { method: 'embedContent', body: request(inputs[0] ?? '') };
  return {
    method: 'batchEmbedContents',
    body: { requests: inputs.map((text) => ({ model: `models/${model}`, ...request(text) })) },
  };
}

/** The same for Vertex AI, whose text embedding models take `predict` with one instance per text. */
export function vertexEmbedCall(body: Json): EmbedCall {
  const inputs = textInputs(body.input);
  const instances = inputs.map((content) =>
    typeof body.task_type === 'string' ? { content, task_type: body.task_type } : { content },
  );
  const call: Json = { instances };
  if (typeof body.dimensions === 'number') call.parameters = { outputDimensionality: body.dimensions };
  return { method: 'predict', body: call };
}

const numbers = (value: unknown): number[] =>
  Array.isArray(value) ? value.filter((n): n is number => typeof n === 'number') : [];

/**
 * Any of the three answers (`{ embedding }`, `{ embeddings: [...] }`, Vertex `{ predictions }`)
 * as an OpenAI embedding list. Vertex reports tokens per instance (`statistics.token_count`);
 * the Gemini API reports none, so usage is then null.
 */
export function toEmbeddingList(body: unknown, model: string | null): { body: Json; usage: TokenUsage | null } {
  const answer = isObject(body) ? body : {};
  let vectors: number[][] = [];
  let tokens: number | null = null;
  if (isObject(answer.embedding)) vectors = [numbers(answer.embedding.values)];
  else if (Array.isArray(answer.embeddings))
    vectors = answer.embeddings.map((e) => numbers(isObject(e) ? e.values : undefined));
  else if (Array.isArray(answer.predictions)) {
    for (const prediction of answer.predictions) {
      const embeddings = isObject(prediction) && isObject(prediction.embeddings) ? prediction.embeddings : {};
      vectors.push(numbers(embeddings.values));
      const count = isObject(embeddings.statistics) ? embeddings.statistics.token_count : undefined;
      if (typeof count === 'number') tokens = (tokens ?? 0) + count;
    }
  }
  const metadata = isObject(answer.usageMetadata) ? answer.usageMetadata : null;
  if (tokens === null && metadata && typeof metadata.promptTokenCount === 'number') tokens = metadata.promptTokenCount;
  const usage: TokenUsage | null =
    tokens === null ? null : { promptTokens: tokens, completionTokens: null, cachedTokens: null, totalTokens: tokens };
  const list: Json = {
    object: 'list',
    data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
    model: model ?? '',
    usage: { prompt_tokens: tokens ?? 0, total_tokens: tokens ?? 0 },
  };
  return { body: list, usage };
}
