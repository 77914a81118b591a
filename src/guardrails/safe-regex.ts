/**
 * Patterns written by admins run in a vm context with a time limit: a pattern that
 * backtracks catastrophically (`(a+)+$`) would otherwise block the event loop, which no
 * check time-out can interrupt. The limit costs about 0.1 ms per test.
 */
import { createContext, Script } from 'node:vm';

export const REGEX_TIME_LIMIT_MS = 100;
const script = new Script('pattern.test(text)');

/** A compile error's message, or null when the pattern compiles. */
export function regexProblem(source: string, flags = ''): string | null {
  try {
    new RegExp(source, flags);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : 'invalid regular expression';
  }
}

/** pattern.test(text), or an Error when it runs past the limit. */
export function testWithin(pattern: RegExp, text: string, limitMs = REGEX_TIME_LIMIT_MS): boolean {
  const sandbox = createContext({ pattern, text });
  try {
    return script.runInContext(sandbox, { timeout: limitMs }) === true;
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT')
      throw new Error(`the pattern ran longer than ${limitMs} ms on this text`, { cause: error });
    throw error;
  }
}
