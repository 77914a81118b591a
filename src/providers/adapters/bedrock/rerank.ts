import { AppError } from '../../../lib/errors.js';
import type { TokenUsage } from '../../usage.js';
import type { StreamContext } from '../types.js';

type Json = Record<string, unknown>;

/**
 * The model of a rerank request as the ARN the Rerank API wants. The spec has clients send the
 * full ARN (`arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0`); a bare model id
 * is turned into the foundation-model ARN of the request's region.
 */
export function rerankModelArn(model: string, region: string | null): string {
  if (model.startsWith('arn:')) return model;
  if (region === null)
    throw new AppError(
      'INVALID_REQUEST',
      'Bedrock rerank needs the model ARN (arn:aws:bedrock:<region>::foundation-model/<model id>) or a region to build it from.',
      { param: 'model' },
    );
  return `arn:aws:bedrock:${region}::foundation-model/${model}`;
}

/**
 * The gateway's rerank body as a Bedrock Agent Runtime Rerank body. Documents are text
 * sources; a document given as an object is sent as a JSON source, except `{text}` alone.
 */
export function toRerankRequest(body: Json, modelArn: string): Json {
  if (typeof body.query !== 'string' || body.query === '')
    throw new AppError('INVALID_REQUEST', 'query must be a non-empty string.', { param: 'query' });
  const documents = Array.isArray(body.documents) ? body.documents : [];
  const sources = documents.map((document, i) => ({
    type: 'INLINE',
    inlineDocumentSource: documentSource(document, i),
  }));
  const configuration: Json = { modelConfiguration: { modelArn } };
  configuration.numberOfResults =
    typeof body.top_n === 'number' ? Math.min(body.top_n, documents.length) : documents.length;
  return {
    queries: [{ type: 'TEXT', textQuery: { text: body.query } }],
    sources,
    rerankingConfiguration: { type: 'BEDROCK_RERANKING_MODEL', bedrockRerankingConfiguration: configuration },
  };
}

function documentSource(document: unknown, i: number): Json {
  if (typeof document === 'string') return { type: 'TEXT', textDocument: { text: document } };
  if (typeof document === 'object' && document !== null && !Array.isArray(document)) {
    const keys = Object.keys(document);
    const text = (document as Json).text;
    if (keys.length === 1 && typeof text === 'string') return { type: 'TEXT', textDocument: { text } };
    return { type: 'JSON', jsonDocument: document };
  }
  throw new AppError('INVALID_REQUEST', 'Each document must be a string or an object.', { param: `documents[${i}]` });
}

/**
 * Bedrock's `{results: [{index, relevanceScore, document?}]}` in the list shape other rerank
 * providers answer with: `{object: 'list', results: [{index, relevance_score}], model, usage}`.
 * `index` is the document's position in the request. Rerank reports no token usage.
 */
export function toRerankResponse(raw: unknown, ctx: StreamContext): { body: Json; usage: TokenUsage | null } {
  const answer = (typeof raw === 'object' && raw !== null ? raw : {}) as Json;
  const results = (Array.isArray(answer.results) ? (answer.results as Json[]) : []).map((result) => {
    const out: Json = { index: result.index, relevance_score: result.relevanceScore };
    const document = result.document as Json | undefined;
    const text = (document?.textDocument as Json | undefined)?.text;
    if (typeof text === 'string') out.document = { text };
    else if (document?.jsonDocument !== undefined) out.document = document.jsonDocument;
    return out;
  });
  return { body: { object: 'list', results, model: ctx.model ?? '', usage: null }, usage: null };
}
