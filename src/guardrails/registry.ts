/**
 * The built-in guardrail checks, by id. This file is the contract between the guardrails
 * resource (which validates `checks[]` when a guardrail is saved) and the check library
 * (which runs them). The library fills in parameter validation per check.
 */

/** Ids of the checks svcgw runs itself (no network unless the check is a webhook or a fetch). */
export const BUILT_IN_CHECK_IDS = [
  'default.regexMatch',
  'default.sentenceCount',
  'default.wordCount',
  'default.characterCount',
  'default.jsonSchema',
  'default.jsonKeys',
  'default.contains',
  'default.validUrls',
  'default.containsCode',
  'default.endsWith',
  'default.isAllLowerCase',
  'default.alluppercase',
  'default.modelWhitelist',
  'default.jwt',
  'default.webhook',
  'default.requiredMetadataKeys',
  'default.requiredMetadataKeyPairs',
  'default.allowedRequestTypes',
  'default.requestParamsCheck',
  'default.inlineImageUrls',
  'default.addPrefix',
  'default.thirdPartyDetection',
  'default.pii',
] as const;

export type BuiltInCheckId = (typeof BUILT_IN_CHECK_IDS)[number];

/** Reference ids that name our own implementation. */
export const CHECK_ID_ALIASES: Readonly<Record<string, BuiltInCheckId>> = { 'vendor.pii': 'default.pii' };

export const isBuiltInCheckId = (id: string): id is BuiltInCheckId =>
  (BUILT_IN_CHECK_IDS as readonly string[]).includes(id);

/** The built-in id an id given by a client stands for, or null when svcgw does not run it. */
export function builtInCheckId(id: string): BuiltInCheckId | null {
  if (isBuiltInCheckId(id)) return id;
  return CHECK_ID_ALIASES[id] ?? null;
}

/**
 * What is wrong with a check's parameters, or null when they are valid. `param` is the path
 * below `parameters` (e.g. `rule`, `metadataPairs.team`). The check library replaces this
 * placeholder with each check's own schema.
 */
export function checkParameterProblem(id: string, parameters: unknown): { message: string; param: string } | null {
  if (builtInCheckId(id) === null) return { message: `unknown check id '${id}'`, param: 'id' };
  if (parameters !== undefined && (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)))
    return { message: 'parameters must be an object', param: '' };
  return null;
}
