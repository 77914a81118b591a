/**
 * Patterns written by admins run in a vm context with a time limit: a pattern that
 * backtracks catastrophically (`(a+)+$`) would otherwise block the event loop, which no
 * check time-out can interrupt. One context serves every test: making one per test cost about
 * 1 ms of CPU and so much garbage that a collection pause could run a harmless pattern past
 * the limit.
 */
import { createContext, Script } from 'node:vm';

export const REGEX_TIME_LIMIT_MS = 100;
const script = new Script('pattern.test(text)');
const sandbox = createContext({ pattern: null as RegExp | null, text: '' });

/** A compile error's message, or null when the pattern compiles. */
export function regexProblem(source: string, flags = ''): string | null {
  try {
    new RegExp(source, flags);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : 'invalid regular expression';
  }
}

/**
 * pattern.test(text), or an Error when it runs past the limit twice: a first time-out may be a
 * pause of the process (garbage collection, a busy machine) rather than the pattern, and a
 * harmless pattern must not fail a check because of one.
 */
export function testWithin(pattern: RegExp, text: string, limitMs = REGEX_TIME_LIMIT_MS): boolean {
  sandbox.pattern = pattern;
  sandbox.text = text;
  try {
    return runOnce(limitMs) ?? runOnce(limitMs) ?? timedOut(limitMs);
  } finally {
    sandbox.pattern = null; // the pattern and the text are not kept alive between requests
    sandbox.text = '';
  }
}

/** The test's result, or null when it ran past the limit. */
function runOnce(limitMs: number): boolean | null {
  try {
    return script.runInContext(sandbox, { timeout: limitMs }) === true;
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return null;
    throw error;
  }
}

function timedOut(limitMs: number): never {
  throw new Error(`the pattern ran longer than ${limitMs} ms on this text`);
}
