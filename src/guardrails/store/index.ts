export {
  actionsInput,
  toActions,
  withOverrides,
  type ActionsInput,
  type Feedback,
  type GuardrailActions,
} from './actions.js';
export { checkInput, checkProblem, toCheck, type GuardrailCheck } from './checks.js';
export {
  GUARDRAIL_FIELDS,
  guardrailFieldSchemas,
  guardrailUsesOf,
  usesIn,
  type GuardrailFields,
  type GuardrailUse,
  type NodeGuardrails,
} from './config-entries.js';
export {
  createGuardrailLookup,
  type GuardrailLookup,
  type RequestGuardrails,
  type ResolvedCheck,
  type ResolvedGuardrail,
} from './lookup.js';
export { parseWorkspaceDefaults, workspaceDefaultsInput, type WorkspaceDefaults } from './workspace-defaults.js';
