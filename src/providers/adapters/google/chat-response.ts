import type { TokenUsage } from '../../usage.js';
import type { StreamContext } from '../types.js';
import {
  isObject,
  type GeminiCandidate,
  type GeminiPart,
  type GeminiUsageMetadata,
  type GenerateContentResponse,
  type Json,
} from './gemini-types.js';
import { newToolCallId } from './tool-call-ids.js';

const CONTENT_FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

/** Gemini's `finishReason` as OpenAI's; a turn that ends on function calls is 'tool_calls'. */
export function finishReasonOf(reason: string | undefined, calledTools: boolean): string | null {
  if (reason === undefined || reason === '') return null;
  if (reason === 'MAX_TOKENS') return 'length';
  if (CONTENT_FILTERED.has(reason)) return 'content_filter';
  return calledTools ? 'tool_calls' : 'stop';
}

const count = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/**
 * Usage from `usageMetadata`. Thinking tokens are billed as output, so they count as
 * completion tokens (and as `reasoning_tokens`), the way OpenAI counts reasoning.
 */
export function usageOf(metadata: GeminiUsageMetadata | undefined): TokenUsage | null {
  if (!isObject(metadata)) return null;
  const prompt = count(metadata.promptTokenCount);
  const candidates = count(metadata.candidatesTokenCount);
  const thoughts = count(metadata.thoughtsTokenCount);
  const completion = candidates === null && thoughts === null ? null : (candidates ?? 0) + (thoughts ?? 0);
  const total =
    count(metadata.totalTokenCount) ??
    (prompt === null && completion === null ? null : (prompt ?? 0) + (completion ?? 0));
  return {
    promptTokens: prompt,
    completionTokens: completion,
    cachedTokens: count(metadata.cachedContentTokenCount),
    totalTokens: total,
  };
}

/** The OpenAI `usage` object for a TokenUsage, with the details OpenAI clients read. */
export function openAIUsage(usage: TokenUsage, metadata: GeminiUsageMetadata | undefined): Json {
  return {
    prompt_tokens: usage.promptTokens ?? 0,
    completion_tokens: usage.completionTokens ?? 0,
    total_tokens: usage.totalTokens ?? 0,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: count(metadata?.thoughtsTokenCount) ?? 0 },
  };
}

/** The answer text of a candidate's parts (thought summaries left out) and its function calls. */
export function splitParts(parts: GeminiPart[] | undefined): { text: string; toolCalls: Json[] } {
  let text = '';
  const toolCalls: Json[] = [];
  for (const part of parts ?? []) {
    if (!isObject(part)) continue;
    if (typeof part.text === 'string' && part.thought !== true) text += part.text;
    if (isObject(part.functionCall) && typeof part.functionCall.name === 'string') {
      toolCalls.push({
        id: newToolCallId(part.thoughtSignature),
        type: 'function',
        function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
      });
    }
  }
  return { text, toolCalls };
}

function choiceOf(candidate: GeminiCandidate, position: number): Json {
  const { text, toolCalls } = splitParts(candidate.content?.parts);
  const message: Json = {
    role: 'assistant',
    content: text === '' && toolCalls.length > 0 ? null : text,
    refusal: null,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    index: typeof candidate.index === 'number' ? candidate.index : position,
    message,
    logprobs: null,
    finish_reason: finishReasonOf(candidate.finishReason, toolCalls.length > 0) ?? 'stop',
  };
}

/** A `GenerateContentResponse` as an OpenAI `chat.completion`. */
export function toChatCompletion(body: unknown, ctx: StreamContext): { body: Json; usage: TokenUsage | null } {
  const response = (isObject(body) ? body : {}) as GenerateContentResponse;
  const candidates = Array.isArray(response.candidates) ? response.candidates : [];
  const choices = candidates.map((candidate, i) => choiceOf(candidate, i));
  // A prompt blocked before generation has no candidates, only promptFeedback.blockReason.
  if (choices.length === 0) {
    choices.push({
      index: 0,
      message: { role: 'assistant', content: null, refusal: null },
      logprobs: null,
      finish_reason: response.promptFeedback?.blockReason ? 'content_filter' : 'stop',
    });
  }
  const usage = usageOf(response.usageMetadata);
  const completion: Json = {
    id: ctx.id,
    object: 'chat.completion',
    created: ctx.created,
    model: typeof response.modelVersion === 'string' ? response.modelVersion : (ctx.model ?? ''),
    choices,
  };
  if (usage) completion.usage = openAIUsage(usage, response.usageMetadata);
  return { body: completion, usage };
}
