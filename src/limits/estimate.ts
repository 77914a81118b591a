import type { ModelPrice } from '../pricing/pricing-service.js';
import type { Estimate } from './budgets.js';
import { promptTokens } from './prompt-tokens.js';
import { counterFor, encodingFor, utf8Bytes } from './tokenizers.js';

/**
 * Output reserved when the request sets no output bound and the capabilities data gives no
 * maximum for the model: the largest maximum output of the shipped capabilities (128,000).
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 128_000;
/** OpenAI's default max_tokens for the legacy completions endpoint. */
const COMPLETIONS_DEFAULT_MAX_TOKENS = 16;
/** Families that produce no tokens of text (their usage, if any, is prompt only). */
const NO_OUTPUT = new Set(['embed', 'moderate', 'rerank', 'listModels']);

export interface EstimateRequest {
  endpointType: string;
  method: string;
  body: Record<string, unknown> | null;
  /** Size of the body as received (or announced, for bodies that stream through). */
  bodyBytes: number;
  model: string | null;
  price: ModelPrice | null;
  /** The model's maximum output from the capabilities data, when known. */
  maxOutputTokens: number | null;
}

const positive = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.ceil(value) : null;

/** The most output the request can produce: its own bound (per choice) × choices, or the model's maximum. */
export function outputBound(
  endpointType: string,
  body: Record<string, unknown> | null,
  maxOutputTokens: number | null,
): number {
  if (NO_OUTPUT.has(endpointType)) return 0;
  const own = positive(body?.max_completion_tokens) ?? positive(body?.max_tokens) ?? positive(body?.max_output_tokens);
  const perChoice =
    own ??
    (endpointType === 'complete' ? COMPLETIONS_DEFAULT_MAX_TOKENS : (maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS));
  const choices = Math.max(positive(body?.n) ?? 1, positive(body?.best_of) ?? 1);
  return perChoice * choices;
}

/** Cost in USD of a number of prompt and output tokens, at the long-prompt rates when the prompt passes their threshold. */
export function costOfTokens(price: ModelPrice, prompt: number, completion: number): number {
  const rates = price.long_prompt && prompt > price.long_prompt.threshold_tokens ? price.long_prompt : price;
  return (prompt * rates.input + completion * rates.output) / 1_000_000;
}

const NOTHING: Estimate = { cost: 0, tokens: 0, promptTokens: 0, completionTokens: 0 };

/**
 * The most a request can use, two ways: `bytes` counts every prompt field as UTF-8 bytes (a
 * BPE token is at least one byte, so it never undercounts and needs no encoding table);
 * `exact` counts with the model's encoding, and is null when bytes already are the count (no
 * public encoding, no text to count). Budget reservations take the byte bound while the budget
 * has ample room and count exactly only near the limit (budget-reservation.ts).
 */
export interface EstimateBound {
  bytes: Estimate;
  exact: (() => Promise<Estimate>) | null;
}

/** Reads and deletions (GET, HEAD, DELETE) produce no tokens and reserve nothing. */
const readsOnly = (request: EstimateRequest): boolean =>
  request.method === 'GET' ||
  request.method === 'HEAD' ||
  request.method === 'DELETE' ||
  request.endpointType === 'listModels';

function estimateOf(request: EstimateRequest, prompt: number, completion: number): Estimate {
  return {
    cost: request.price ? costOfTokens(request.price, prompt, completion) : null,
    tokens: prompt + completion,
    promptTokens: prompt,
    completionTokens: completion,
  };
}

/**
 * Both bounds of a request (see `EstimateBound`); the byte bound is computed at once, the
 * exact count (which loads the encoding on first use) only when asked for, and once.
 */
export function boundRequest(request: EstimateRequest): EstimateBound {
  if (readsOnly(request)) return { bytes: { ...NOTHING }, exact: null };
  const completion = outputBound(request.endpointType, request.body, request.maxOutputTokens);
  const body = request.body;
  const inBytes = body ? promptTokens(request.endpointType, body, { count: utf8Bytes, model: request.model }) : NaN;
  // Images, audio and pass-through bodies: no field is text the tokenizer can count, bytes bound it.
  if (Number.isNaN(inBytes)) return { bytes: estimateOf(request, request.bodyBytes, completion), exact: null };
  const bytes = estimateOf(request, inBytes, completion);
  if (!body || encodingFor(request.model) === null) return { bytes, exact: null };
  let exact: Promise<Estimate> | null = null;
  const count = async (): Promise<Estimate> => {
    const counter = await counterFor(request.model);
    return estimateOf(
      request,
      promptTokens(request.endpointType, body, { count: counter, model: request.model }),
      completion,
    );
  };
  return { bytes, exact: () => (exact ??= count()) };
}

/**
 * The most a request can use, before it runs: its prompt counted with the model's tokenizer
 * (bytes when the tokenizer is unknown) over every field that becomes prompt, plus its output
 * bound. Budgets reserve an upper bound and settle the real figure afterwards, so a budget is
 * never overshot by requests in flight.
 */
export async function estimateRequest(request: EstimateRequest): Promise<Estimate> {
  const bound = boundRequest(request);
  return bound.exact ? bound.exact() : bound.bytes;
}
