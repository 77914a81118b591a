import { runChecks, type CheckSpec } from '../../../src/guardrails/run-checks.js';
import { DEFAULT_SERVER_OPTIONS, type GuardrailContext } from '../../../src/guardrails/types.js';

/** A chat request context; `overrides` replace whole fields. */
export function chatContext(userText: string, overrides: Partial<GuardrailContext> = {}): GuardrailContext {
  return {
    hook: 'beforeRequestHook',
    endpoint: 'chatComplete',
    request: {
      json: {
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: userText },
        ],
      },
      headers: {},
    },
    metadata: {},
    model: 'gpt-4o-mini',
    provider: 'openai',
    signal: new AbortController().signal,
    server: DEFAULT_SERVER_OPTIONS,
    ...overrides,
  };
}

/** An afterRequestHook context with a chat completion whose first choice says `answer`. */
export function answerContext(answer: string, overrides: Partial<GuardrailContext> = {}): GuardrailContext {
  return chatContext('question', {
    hook: 'afterRequestHook',
    response: {
      status: 200,
      json: {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
      },
    },
    ...overrides,
  });
}

/** Runs one check and returns its result (and the outcome's bodies). */
export async function runOne(id: string, parameters: unknown, context: GuardrailContext) {
  const spec: CheckSpec = { id, parameters };
  const outcome = await runChecks([spec], context);
  return { ...outcome.results[0]!, outcome };
}
