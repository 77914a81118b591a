import { z } from 'zod';
import { REDACTED } from '../lib/redact.js';
import type { BuiltInCheckId } from './check-ids.js';
import type { CheckDefinition, CheckProblem, CheckResult, GuardrailContext, GuardrailHook } from './types.js';

/** Checks that do not name their own time limit get this one. */
export const DEFAULT_CHECK_TIMEOUT_MS = 5_000;

export interface CheckSpecification<S extends z.ZodType> {
  id: BuiltInCheckId;
  hooks: readonly GuardrailHook[];
  /** A strict zod object: a misspelt parameter is an error when the guardrail is saved. */
  parameters: S;
  /** Rules beyond the shape (a regex that compiles, min ≤ max). */
  refine?: (parameters: z.output<S>) => CheckProblem | null;
  timeoutMs?: (parameters: z.output<S>) => number;
  /** Default: an error or a time-out fails the check (fail closed). */
  failOnError?: (parameters: z.output<S>) => boolean;
  /** Never changes the bodies and does nothing besides judging (see PreparedCheck.readOnly). */
  readOnly?: boolean;
  /** Top-level parameter names whose values (or, for objects, whose entries' values) are secrets. */
  secretParameters?: readonly string[];
  run(context: GuardrailContext, parameters: z.output<S>): Promise<CheckResult> | CheckResult;
}

const pathOf = (path: readonly PropertyKey[]) => path.map(String).join('.');

/** The first zod issue as a problem naming the parameter's path below `parameters`. */
export function zodProblem(error: z.ZodError): CheckProblem {
  const issue = error.issues[0];
  if (!issue) return { message: 'invalid parameters', param: '' };
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    return { message: `unknown parameter '${key}'`, param: pathOf([...issue.path, key]) };
  }
  const where = pathOf(issue.path);
  return { message: where ? `${where}: ${issue.message}` : issue.message, param: where };
}

/** Turns a typed specification into the erased definition the runner and the registry use. */
export function defineCheck<S extends z.ZodType>(spec: CheckSpecification<S>): CheckDefinition {
  return {
    id: spec.id,
    hooks: spec.hooks,
    prepare(raw) {
      const parsed = spec.parameters.safeParse(raw ?? {});
      if (!parsed.success) return { ok: false, problem: zodProblem(parsed.error) };
      const parameters = parsed.data;
      const problem = spec.refine?.(parameters) ?? null;
      if (problem) return { ok: false, problem };
      return {
        ok: true,
        check: {
          timeoutMs: spec.timeoutMs?.(parameters) ?? DEFAULT_CHECK_TIMEOUT_MS,
          failOnError: spec.failOnError?.(parameters) ?? true,
          run: (context) => spec.run(context, parameters),
          ...(spec.readOnly ? { readOnly: true } : {}),
        },
      };
    },
    redact(raw) {
      if (!spec.secretParameters || typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw;
      const copy: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
      for (const name of spec.secretParameters) {
        const value = copy[name];
        if (value === undefined) continue;
        copy[name] =
          typeof value === 'object' && value !== null && !Array.isArray(value)
            ? Object.fromEntries(Object.keys(value).map((k) => [k, REDACTED]))
            : REDACTED;
      }
      return copy;
    },
  };
}

/** Shared parameter pieces. */
export const notFlag = z.boolean().default(false);
export const operator = (fallback: 'all' | 'any' | 'none') => z.enum(['all', 'any', 'none']).default(fallback);
export const nonEmptyStrings = z.array(z.string().min(1)).min(1);
/** Counts in the reference are JSON numbers; fractional bounds make no sense. */
export const count = (fallback: number) => z.number().int().min(0).default(fallback);

export const pass = (explanation: string, data?: Record<string, unknown>): CheckResult =>
  data ? { verdict: true, explanation, data } : { verdict: true, explanation };
export const fail = (explanation: string, data?: Record<string, unknown>): CheckResult =>
  data ? { verdict: false, explanation, data } : { verdict: false, explanation };

/**
 * Applies `not`: the check's own finding, inverted when asked, with the explanation to match.
 * `data` is the caller's own new object: `not` is added to it rather than to a copy (a spread per
 * check showed in profiles of guarded requests).
 */
export function verdictOf(
  finding: boolean,
  not: boolean,
  explain: { whenTrue: string; whenFalse: string },
  data?: Record<string, unknown>,
): CheckResult {
  const verdict = not ? !finding : finding;
  const explanation = (finding ? explain.whenTrue : explain.whenFalse) + (not ? ' (inverted by not)' : '');
  if (!data) return { verdict, explanation, data: { not } };
  data.not = not;
  return { verdict, explanation, data };
}
