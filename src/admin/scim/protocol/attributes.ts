/**
 * SCIM attribute names are case-insensitive (RFC 7643 §2.1): requests may spell `UserName` or
 * `emails[Type eq "work"]`. Known names are written back in their canonical spelling so that
 * stored resources read the same whichever way a provider spelled them.
 */
const CANONICAL_NAMES = [
  'schemas',
  'id',
  'externalId',
  'meta',
  'userName',
  'name',
  'formatted',
  'familyName',
  'givenName',
  'middleName',
  'honorificPrefix',
  'honorificSuffix',
  'displayName',
  'nickName',
  'profileUrl',
  'title',
  'userType',
  'preferredLanguage',
  'locale',
  'timezone',
  'active',
  'password',
  'emails',
  'phoneNumbers',
  'ims',
  'photos',
  'addresses',
  'groups',
  'entitlements',
  'roles',
  'x509Certificates',
  'members',
  'value',
  'display',
  'type',
  'primary',
  '$ref',
  'employeeNumber',
  'costCenter',
  'organization',
  'division',
  'department',
  'manager',
];

const CANONICAL = new Map(CANONICAL_NAMES.map((name) => [name.toLowerCase(), name]));

/** Multi-valued attributes: `add` appends to them. */
const MULTI_VALUED = new Set(
  [
    'emails',
    'phoneNumbers',
    'ims',
    'photos',
    'addresses',
    'groups',
    'entitlements',
    'roles',
    'x509Certificates',
    'members',
  ].map((name) => name.toLowerCase()),
);

export type JsonObject = Record<string, unknown>;

export const isPlainObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const canonicalName = (name: string): string => CANONICAL.get(name.toLowerCase()) ?? name;

export const isMultiValued = (name: string): boolean => MULTI_VALUED.has(name.toLowerCase());

/** The key of `object` that names `attr`, whatever its case; else the canonical spelling of `attr`. */
export function keyFor(object: JsonObject, attr: string): string {
  const lowered = attr.toLowerCase();
  return Object.keys(object).find((key) => key.toLowerCase() === lowered) ?? canonicalName(attr);
}

/** The value of `attr` in `object`, whatever the case of its key. */
export const read = (object: JsonObject, attr: string): unknown => object[keyFor(object, attr)];

/** Keys of known attributes in canonical spelling, at every depth (extension URNs kept as sent). */
export function canonicalise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonicalise);
  if (!isPlainObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, inner] of Object.entries(value)) out[canonicalName(key)] = canonicalise(inner);
  return out;
}

/**
 * A SCIM boolean. Microsoft Entra ID sends booleans as the strings "True" and "False" in PATCH
 * values; both spellings are accepted. Anything else is not a boolean (undefined).
 */
export function asBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') {
    const lowered = value.trim().toLowerCase();
    if (lowered === 'true') return true;
    if (lowered === 'false') return false;
  }
  return undefined;
}

/** A scalar as text (for case-insensitive comparisons); objects and absent values are the empty string. */
export const textOf = (value: unknown): string =>
  typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';

/** Deep copy of a JSON value (resources are plain JSON). */
export const cloneJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
