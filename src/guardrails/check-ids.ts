/**
 * The built-in check ids, in a module of their own so that both the registry (which imports
 * every check) and the checks (which name their id) can import them without a cycle.
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
  return Object.hasOwn(CHECK_ID_ALIASES, id) ? (CHECK_ID_ALIASES[id] ?? null) : null;
}
