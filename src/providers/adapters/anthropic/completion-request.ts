import { invalid } from '../../../lib/errors.js';
import { maxTokens, samplingParams } from './chat-request.js';
import type { Json } from './wire-types.js';

/**
 * A legacy text completion as a Messages request: the prompt becomes the one user message.
 * Options that only make sense for a raw text model (echo, suffix, logprobs, best_of, several
 * prompts) are refused rather than silently ignored.
 */
export function completionToMessages(body: Json): Json {
  const prompt = singlePrompt(body.prompt);
  if (body.echo === true) throw invalid('echo', 'echo is not supported by Anthropic.');
  if (typeof body.suffix === 'string' && body.suffix !== '')
    throw invalid('suffix', 'suffix is not supported by Anthropic.');
  if (typeof body.logprobs === 'number') throw invalid('logprobs', 'Anthropic does not return log probabilities.');
  if (typeof body.best_of === 'number' && body.best_of > 1)
    throw invalid('best_of', 'best_of is not supported by Anthropic.');
  if (typeof body.n === 'number' && body.n > 1)
    throw invalid('n', 'Anthropic returns one choice per request: n must be 1.');
  return {
    model: body.model,
    messages: [{ role: 'user', content: prompt }],
    max_tokens: maxTokens(body),
    ...samplingParams(body),
  };
}

function singlePrompt(prompt: unknown): string {
  if (typeof prompt === 'string' && prompt !== '') return prompt;
  if (Array.isArray(prompt) && prompt.length === 1 && typeof prompt[0] === 'string' && prompt[0] !== '')
    return prompt[0];
  throw invalid(
    'prompt',
    'prompt must be one non-empty string for Anthropic (token arrays and several prompts are not supported).',
  );
}
