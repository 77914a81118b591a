import type { ModelPrice } from '../pricing/pricing-service.js';
import type { Estimate } from './budgets.js';

/** Completion tokens assumed for a chat request that sets no max_tokens. */
export const DEFAULT_COMPLETION_ESTIMATE = 256;
/** OpenAI's default max_tokens for the legacy completions endpoint. */
const COMPLETIONS_DEFAULT_MAX_TOKENS = 16;

/** Characters of text in chat messages: string contents and the text parts of multi-part ones. */
function messageText(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  let length = 0;
  for (const message of messages) {
    const content = (message as { content?: unknown } | null)?.content;
    if (typeof content === 'string') length += content.length;
    else if (Array.isArray(content)) {
      for (const part of content) if (typeof (part as { text?: unknown })?.text === 'string') length += (part as { text: string }).text.length;
    }
  }
  return length;
}

function inputText(input: unknown): number {
  if (typeof input === 'string') return input.length;
  if (Array.isArray(input)) return input.reduce((sum: number, item) => sum + (typeof item === 'string' ? item.length : Array.isArray(item) ? item.length * 4 : 4), 0);
  return 0;
}

/**
 * What a request will probably cost, before it runs: prompt tokens at about four characters a
 * token, plus the completion it may produce (its max_tokens, or a default). Budgets reserve
 * this and settle the real figure afterwards.
 */
export function estimateRequest(endpointType: string, body: Record<string, unknown> | null, bodyBytes: number, price: ModelPrice | null): Estimate {
  let prompt: number;
  let completion = 0;
  const maxTokens = (body?.max_completion_tokens ?? body?.max_tokens) as number | undefined | null;
  switch (endpointType) {
    case 'chatComplete':
      prompt = Math.ceil(messageText(body?.messages) / 4);
      completion = typeof maxTokens === 'number' ? maxTokens : DEFAULT_COMPLETION_ESTIMATE;
      break;
    case 'complete':
      prompt = Math.ceil(inputText(body?.prompt) / 4);
      completion = typeof maxTokens === 'number' ? maxTokens : COMPLETIONS_DEFAULT_MAX_TOKENS;
      break;
    case 'embed':
      prompt = Math.ceil(inputText(body?.input) / 4);
      break;
    default:
      prompt = Math.ceil(bodyBytes / 4);
  }
  const tokens = prompt + completion;
  const cost = price ? (prompt * price.input + completion * price.output) / 1_000_000 : null;
  return { cost, tokens };
}
