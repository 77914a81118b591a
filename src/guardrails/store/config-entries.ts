import { z } from 'zod';
import { actionFields, outcomeInput, toActions, type ActionOverrides, type GuardrailActions } from './actions.js';
import { checkInput, checkProblem, toCheck, type GuardrailCheck } from './checks.js';

/**
 * The guardrail fields of a gateway config node (and of workspace defaults), in the established
 * gateway's shapes:
 *
 * - `input_guardrails` / `output_guardrails`: each entry is a stored guardrail's id or slug, or
 *   an inline guardrail `{"default.contains": {…parameters}, "deny": true, …}` whose keys are
 *   check ids (a bare name means `default.<name>`) next to the action keys below.
 * - `before_request_hooks` / `after_request_hooks`: hook objects `{type: "guardrail", id,
 *   checks: [{id, parameters}], deny, async, on_fail, on_success}`; without `checks`, `id`
 *   names a stored guardrail and the action keys given replace its own.
 */
export const GUARDRAIL_FIELDS = [
  'input_guardrails',
  'output_guardrails',
  'before_request_hooks',
  'after_request_hooks',
] as const;
export type GuardrailField = (typeof GUARDRAIL_FIELDS)[number];

/** Keys of an inline guardrail that are not check ids. */
const ACTION_KEYS = new Set(['deny', 'async', 'on_fail', 'on_success', 'id', 'type', 'guardrail_version_id']);
const reference = z.string().min(1).max(255);
const versionId = z.uuid().optional();

const inlineActions = z
  .object({
    ...actionFields,
    id: reference.optional(),
    type: z.literal('guardrail').optional(),
    guardrail_version_id: versionId,
  })
  .strict();

/** An inline guardrail of `input_guardrails`: check ids as keys, parameters as values. */
const inlineGuardrail = z.record(z.string(), z.unknown()).superRefine((entry, ctx) => {
  const actions: Record<string, unknown> = {};
  let checks = 0;
  for (const [key, value] of Object.entries(entry)) {
    if (ACTION_KEYS.has(key)) {
      actions[key] = value;
      continue;
    }
    checks += 1;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', path: [key], message: `the parameters of check "${key}" must be an object` });
      continue;
    }
    const { is_enabled: enabled, ...parameters } = value as Record<string, unknown>;
    if (enabled !== undefined && typeof enabled !== 'boolean')
      ctx.addIssue({ code: 'custom', path: [key, 'is_enabled'], message: 'is_enabled is true or false' });
    const problem = checkProblem(checkIdOf(key), parameters);
    if (problem)
      ctx.addIssue({
        code: 'custom',
        path: problem.path[0] === 'id' ? [key] : [key, ...problem.path.slice(1)],
        message: problem.message,
      });
  }
  const parsed = inlineActions.safeParse(actions);
  if (!parsed.success)
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  if (checks === 0 && typeof actions['id'] !== 'string')
    ctx.addIssue({
      code: 'custom',
      message: 'an inline guardrail names at least one check (or the id of a stored guardrail)',
    });
});

/**
 * An entry of `input_guardrails`: a reference or an inline guardrail. Dispatched by hand rather
 * than with a union, so that an inline guardrail's problems keep their own paths and messages.
 */
export const guardrailListEntry = z.unknown().superRefine((entry, ctx) => {
  const schema = typeof entry === 'string' ? reference : isPlainObject(entry) ? inlineGuardrail : undefined;
  if (!schema) {
    ctx.addIssue({ code: 'custom', message: 'an entry is a guardrail id or slug, or an inline guardrail object' });
    return;
  }
  const parsed = schema.safeParse(entry);
  if (!parsed.success)
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
});

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A hook object of `before_request_hooks` / `after_request_hooks`. */
export const hookEntry = z
  .object({
    type: z.literal('guardrail').optional(),
    id: reference.optional(),
    checks: z.array(checkInput).min(1).max(50).optional(),
    guardrail_version_id: versionId,
    ...actionFields,
  })
  .strict()
  .superRefine((hook, ctx) => {
    if (hook.checks === undefined && hook.id === undefined)
      ctx.addIssue({ code: 'custom', path: ['checks'], message: 'a hook has checks, or the id of a stored guardrail' });
    hook.checks?.forEach((check, i) => {
      const problem = checkProblem(check.id, check.parameters);
      if (problem) ctx.addIssue({ code: 'custom', path: ['checks', i, ...problem.path], message: problem.message });
    });
  });

/** The four fields as they sit on a config node (and on workspace defaults, the first two). */
export const guardrailFieldSchemas = {
  input_guardrails: z.array(guardrailListEntry).max(50).optional(),
  output_guardrails: z.array(guardrailListEntry).max(50).optional(),
  before_request_hooks: z.array(hookEntry).max(50).optional(),
  after_request_hooks: z.array(hookEntry).max(50).optional(),
};

export type GuardrailFields = Partial<Record<GuardrailField, unknown[]>>;

/** `regexMatch` → `default.regexMatch`; ids with a dot are kept. */
export const checkIdOf = (key: string): string => (key.includes('.') ? key : `default.${key}`);

/** One guardrail a config node (or workspace defaults) uses, ready to run or to look up. */
export type GuardrailUse =
  | { kind: 'reference'; ref: string; versionId?: string; overrides: ActionOverrides; path: string }
  | { kind: 'inline'; label?: string; checks: GuardrailCheck[]; actions: GuardrailActions; path: string };

export interface NodeGuardrails {
  /** beforeRequestHook: `before_request_hooks`, then `input_guardrails`. */
  before: GuardrailUse[];
  /** afterRequestHook: `after_request_hooks`, then `output_guardrails`. */
  after: GuardrailUse[];
}

/**
 * The guardrails one node declares, in the order they run. The node must have passed the
 * schemas above (a stored or validated config); `base` prefixes the paths (`targets[1]`).
 */
export function guardrailUsesOf(node: GuardrailFields, base = ''): NodeGuardrails {
  if (base !== '') return usesOfNode(node, base);
  let uses = usesByNode.get(node);
  if (!uses) usesByNode.set(node, (uses = usesOfNode(node, '')));
  return uses;
}

/**
 * Parsed configs are kept and never changed, so a node's uses are worked out once: the same
 * check parameters objects then come back on every request, and the runner's validated checks
 * (kept per parameters object) are found again instead of parsed anew.
 */
const usesByNode = new WeakMap<object, NodeGuardrails>();

function usesOfNode(node: GuardrailFields, base: string): NodeGuardrails {
  const at = (field: string, i: number) => `${base === '' ? '' : `${base}.`}${field}[${i}]`;
  const hooks = (field: GuardrailField) =>
    (node[field] ?? []).map((hook, i) => hookUse(hook as z.infer<typeof hookEntry>, at(field, i)));
  const list = (field: GuardrailField) =>
    (node[field] ?? []).map((entry, i) => listUse(entry as string | Record<string, unknown>, at(field, i)));
  return {
    before: [...hooks('before_request_hooks'), ...list('input_guardrails')],
    after: [...hooks('after_request_hooks'), ...list('output_guardrails')],
  };
}

function overridesOf(source: Record<string, unknown>): ActionOverrides {
  const out: ActionOverrides = {};
  if (typeof source['deny'] === 'boolean') out.deny = source['deny'];
  if (typeof source['async'] === 'boolean') out.async = source['async'];
  if (source['on_success'] !== undefined) out.on_success = outcomeInput.parse(source['on_success']);
  if (source['on_fail'] !== undefined) out.on_fail = outcomeInput.parse(source['on_fail']);
  return out;
}

function hookUse(hook: z.infer<typeof hookEntry>, path: string): GuardrailUse {
  if (hook.checks === undefined)
    return {
      kind: 'reference',
      ref: hook.id!,
      ...(hook.guardrail_version_id ? { versionId: hook.guardrail_version_id } : {}),
      overrides: overridesOf(hook),
      path,
    };
  return {
    kind: 'inline',
    ...(hook.id ? { label: hook.id } : {}),
    checks: hook.checks.map(toCheck),
    actions: toActions(overridesOf(hook)),
    path,
  };
}

function listUse(entry: string | Record<string, unknown>, path: string): GuardrailUse {
  if (typeof entry === 'string') return { kind: 'reference', ref: entry, overrides: {}, path };
  const checks = Object.entries(entry)
    .filter(([key]) => !ACTION_KEYS.has(key))
    .map(([key, value]) => {
      const { is_enabled: enabled, ...parameters } = value as Record<string, unknown>;
      return { id: checkIdOf(key), parameters, is_enabled: enabled !== false };
    });
  const label = typeof entry['id'] === 'string' ? entry['id'] : undefined;
  const version = typeof entry['guardrail_version_id'] === 'string' ? entry['guardrail_version_id'] : undefined;
  if (checks.length === 0 && label !== undefined)
    return {
      kind: 'reference',
      ref: label,
      ...(version ? { versionId: version } : {}),
      overrides: overridesOf(entry),
      path,
    };
  return { kind: 'inline', ...(label ? { label } : {}), checks, actions: toActions(overridesOf(entry)), path };
}

/** Every guardrail a config tree uses (stored or inline), with its path, for checking on save. */
export function usesIn(node: unknown, base = ''): GuardrailUse[] {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return [];
  const record = node as Record<string, unknown>;
  const { before, after } = guardrailUsesOf(record, base);
  const targets = Array.isArray(record['targets']) ? (record['targets'] as unknown[]) : [];
  return [
    ...before,
    ...after,
    ...targets.flatMap((target, i) => usesIn(target, `${base === '' ? '' : `${base}.`}targets[${i}]`)),
  ];
}
