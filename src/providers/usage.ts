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

/** More tokens than any request has used: a count past it is a provider's error, not usage. */
const MAX_TOKENS = 1_000_000_000;
/** A year of audio, in seconds. */
const MAX_AUDIO_SECONDS = 31_536_000;

const plausible = (n: number | null | undefined, max: number, whole: boolean): number | null =>
  typeof n === 'number' && n >= 0 && n <= max ? (whole ? Math.round(n) : n) : null;

/**
 * `usage` with the counts no request can have (negative, not a number, past a billion tokens)
 * read as not reported: a provider's `-1000000` tokens priced a request at −11.25 USD, which a
 * budget would have counted as money back. Fractional tokens are rounded. The same object when
 * every count is plausible.
 */
export function plausibleUsage(usage: TokenUsage): TokenUsage {
  const prompt = plausible(usage.promptTokens, MAX_TOKENS, true);
  const completion = plausible(usage.completionTokens, MAX_TOKENS, true);
  const cached = plausible(usage.cachedTokens, MAX_TOKENS, true);
  const total = plausible(usage.totalTokens, MAX_TOKENS, true);
  const seconds =
    usage.audioSeconds == null ? usage.audioSeconds : plausible(usage.audioSeconds, MAX_AUDIO_SECONDS, false);
  if (
    prompt === usage.promptTokens &&
    completion === usage.completionTokens &&
    cached === usage.cachedTokens &&
    total === usage.totalTokens &&
    seconds === usage.audioSeconds
  )
    return usage;
  const sane: TokenUsage = {
    promptTokens: prompt,
    completionTokens: completion,
    cachedTokens: cached,
    totalTokens: total,
  };
  if (seconds !== undefined) sane.audioSeconds = seconds;
  return sane;
}
