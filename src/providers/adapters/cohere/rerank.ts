import { AppError } from '../../../lib/errors.js';
import type { TokenUsage } from '../../usage.js';
import { finite, isObject, type CohereUsage, type Json } from './cohere-types.js';

/** A document as the text Cohere v2 ranks: a string as it is, `{ text }` by its text, other objects as JSON. */
function documentText(document: unknown): string {
  if (typeof document === 'string') return document;
  if (isObject(document) && typeof document.text === 'string') return document.text;
  return JSON.stringify(document);
}

/** The gateway's rerank body as a Cohere `POST /v2/rerank` body (v2 takes documents as strings). */
export function toCohereRerank(body: Json): Json {
  if (typeof body.model !== 'string' || body.model.trim() === '') {
    throw new AppError('INVALID_REQUEST', 'model is required: the Cohere rerank model (such as rerank-v3.5).', {
      param: 'model',
    });
  }
  const documents = Array.isArray(body.documents) ? body.documents : [];
  const out: Json = { model: body.model.trim(), query: body.query, documents: documents.map(documentText) };
  if (typeof body.top_n === 'number') out.top_n = body.top_n;
  if (typeof body.max_tokens_per_doc === 'number') out.max_tokens_per_doc = body.max_tokens_per_doc;
  return out;
}

/**
 * Cohere's rerank answer in the Cohere/Jina shape the other rerank providers return:
 * `{ id, model, results: [{ index, relevance_score, document? }], usage, meta }`. v2 no longer
 * echoes documents, so `return_documents: true` is honoured here from the request.
 */
export function toRerankResult(
  body: unknown,
  request: Json | null,
  model: string | null,
): { body: Json; usage: TokenUsage | null } {
  const response = isObject(body) ? body : {};
  const documents = Array.isArray(request?.documents) ? request.documents : [];
  const withDocuments = request?.return_documents === true;
  const results = (Array.isArray(response.results) ? response.results : []).filter(isObject).map((result) => {
    const index = finite(result.index) ?? 0;
    const out: Json = { index, relevance_score: finite(result.relevance_score) ?? 0 };
    if (withDocuments && index < documents.length) out.document = { text: documentText(documents[index]) };
    return out;
  });
  const meta = (isObject(response.meta) ? response.meta : {}) as CohereUsage;
  const searchUnits = finite(meta.billed_units?.search_units);
  const tokens = finite(meta.billed_units?.input_tokens) ?? finite(meta.tokens?.input_tokens);
  const usage: TokenUsage | null =
    tokens === null ? null : { promptTokens: tokens, completionTokens: null, cachedTokens: null, totalTokens: tokens };
  return {
    body: {
      id: typeof response.id === 'string' ? response.id : '',
      model: model ?? '',
      results,
      usage: { search_units: searchUnits ?? 0, ...(tokens === null ? {} : { total_tokens: tokens }) },
      ...(isObject(response.meta) ? { meta: response.meta } : {}),
    },
    usage,
  };
}
