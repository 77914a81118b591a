/** Token counts of one request as the provider reported them; null where it did not. */
export interface TokenUsage {
  promptTokens: number | null;
  completionTokens: number | null;
  cachedTokens: number | null;
  totalTokens: number | null;
  /** Seconds of audio, for transcription models billed by duration (`usage.type: "duration"`). */
  audioSeconds?: number | null;
}

export const NO_USAGE: TokenUsage = Object.freeze({
  promptTokens: null,
  completionTokens: null,
  cachedTokens: null,
  totalTokens: null,
});

const int = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/**
 * Reads usage from an OpenAI-format body: chat/completions/embeddings (`prompt_tokens`, …),
 * the Responses API (`input_tokens`, …) and its stream events (`response.usage`), audio
 * transcriptions (`input_tokens`/`output_tokens`, or `seconds` for models billed by duration).
 */
export function usageFromBody(body: unknown): TokenUsage | null {
  if (body === null || typeof body !== 'object') return null;
  const record = body as { usage?: unknown; response?: { usage?: unknown } };
  const usage = (record.usage ?? record.response?.usage) as Record<string, unknown> | null | undefined;
  if (!usage || typeof usage !== 'object') return null;
  const details = (usage.prompt_tokens_details ?? usage.input_tokens_details) as Record<string, unknown> | undefined;
  const prompt = int(usage.prompt_tokens) ?? int(usage.input_tokens);
  const completion = int(usage.completion_tokens) ?? int(usage.output_tokens);
  const total = int(usage.total_tokens) ?? (prompt !== null ? prompt + (completion ?? 0) : null);
  const result: TokenUsage = {
    promptTokens: prompt,
    completionTokens: completion,
    cachedTokens: int(details?.cached_tokens),
    totalTokens: total,
  };
  const seconds = int(usage.seconds);
  if (seconds !== null) result.audioSeconds = seconds;
  return result;
}
