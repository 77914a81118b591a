/**
 * The built-in guardrail checks, by id. This file is the contract between the guardrails
 * resource (which validates `checks[]` when a guardrail is saved) and the check library
 * (which runs them): ids and aliases, parameter validation, and the parameters that must not
 * be shown back.
 */
import { builtInCheckId } from './check-ids.js';
import { CHECKS } from './checks/index.js';

export {
  BUILT_IN_CHECK_IDS,
  CHECK_ID_ALIASES,
  builtInCheckId,
  isBuiltInCheckId,
  type BuiltInCheckId,
} from './check-ids.js';

/**
 * What is wrong with a check's parameters, or null when they are valid. `param` is the path
 * below `parameters` (e.g. `rule`, `metadataPairs.team`); '' is `parameters` itself. An
 * unknown id answers with `param: 'id'`.
 */
export function checkParameterProblem(id: string, parameters: unknown): { message: string; param: string } | null {
  const builtIn = builtInCheckId(id);
  if (builtIn === null) return { message: `unknown check id '${id}'`, param: 'id' };
  const prepared = CHECKS[builtIn].prepare(parameters);
  return prepared.ok ? null : prepared.problem;
}

/**
 * The parameters with every secret value (webhook headers, vendor credentials) replaced by
 * '[REDACTED]': what the resource shows back and writes to audit records. Parameters of an
 * unknown id are returned as they are.
 */
export function redactCheckParameters(id: string, parameters: unknown): unknown {
  const builtIn = builtInCheckId(id);
  return builtIn === null ? parameters : CHECKS[builtIn].redact(parameters);
}
