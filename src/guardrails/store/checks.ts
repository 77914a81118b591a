import { z } from 'zod';
import { BUILT_IN_CHECK_IDS, builtInCheckId, checkParameterProblem } from '../registry.js';

/** One check of a guardrail as clients write it (the reference's `GuardrailCheck`). */
export const checkInput = z
  .object({
    id: z.string().min(1).max(128),
    parameters: z.record(z.string(), z.unknown()).optional(),
    name: z.string().min(1).max(255).optional(),
    is_enabled: z.boolean().optional(),
  })
  .strict();

export interface GuardrailCheck {
  /** The id as given (`default.regexMatch`, or an alias such as `vendor.pii`). */
  id: string;
  parameters: Record<string, unknown>;
  name?: string;
  is_enabled: boolean;
}

export const toCheck = (input: z.infer<typeof checkInput>): GuardrailCheck => ({
  id: input.id,
  parameters: input.parameters ?? {},
  ...(input.name !== undefined ? { name: input.name } : {}),
  is_enabled: input.is_enabled ?? true,
});

/** A problem found in a check, with the path below the check (`id`, `parameters.rule`). */
export interface CheckProblem {
  path: Array<string | number>;
  message: string;
}

/**
 * What is wrong with one check: an id svcgw does not run (vendor checks of the reference
 * included: they are reached through `default.webhook`), or parameters the check refuses.
 * Disabled checks are checked too, so that enabling one later cannot fail at request time.
 */
export function checkProblem(id: string, parameters: unknown): CheckProblem | null {
  if (builtInCheckId(id) === null)
    return {
      path: ['id'],
      message: `check "${id}" is not one svcgw runs (partner checks are reached through default.webhook); built-in checks: ${BUILT_IN_CHECK_IDS.join(', ')}`,
    };
  const problem = checkParameterProblem(id, parameters ?? {});
  if (!problem) return null;
  const below = problem.param === '' ? [] : problem.param.split('.');
  return { path: ['parameters', ...below], message: `check "${id}": ${problem.message}` };
}
