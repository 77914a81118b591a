import type { ModelPrice } from '../pricing/pricing-service.js';
import type { Estimate } from './budgets.js';
import { promptTokens } from './prompt-tokens.js';
import { counterFor } from './tokenizers.js';

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

/**
 * The most a request can use, before it runs: its prompt counted with the model's tokenizer
 * (bytes when the tokenizer is unknown) over every field that becomes prompt, plus its output
 * bound. Budgets reserve this and settle the real figure afterwards, so a budget is never
 * overshot by requests in flight. Reads and deletions (GET, HEAD, DELETE) produce no tokens and reserve nothing.
 */
export async function estimateRequest(request: EstimateRequest): Promise<Estimate> {
  if (
    request.method === 'GET' ||
    request.method === 'HEAD' ||
    request.method === 'DELETE' ||
    request.endpointType === 'listModels'
  )
    return { cost: 0, tokens: 0, promptTokens: 0, completionTokens: 0 };
  const counted = request.body
    ? promptTokens(request.endpointType, request.body, { count: await counterFor(request.model), model: request.model })
    : NaN;
  // Images, audio and pass-through bodies: no field is text the tokenizer can count, bytes bound it.
  const prompt = Number.isNaN(counted) ? request.bodyBytes : counted;
  const completion = outputBound(request.endpointType, request.body, request.maxOutputTokens);
  return {
    cost: request.price ? costOfTokens(request.price, prompt, completion) : null,
    tokens: prompt + completion,
    promptTokens: prompt,
    completionTokens: completion,
  };
}
