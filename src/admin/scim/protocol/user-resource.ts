import type { UserRow } from '../../../storage/repositories/users.js';
import { asBoolean, canonicalise, cloneJson, isPlainObject, read, textOf, type JsonObject } from './attributes.js';
import { locationOf, withMeta } from './resource-meta.js';
import { scimInvalid } from './scim-errors.js';
import { URN } from './schema-urns.js';

/** What svcgw keeps of a SCIM user resource: its columns, and the other attributes as JSON. */
export interface UserInput {
  userName: string;
  externalId: string | null;
  email: string;
  firstName: string | null;
  lastName: string | null;
  active: boolean;
  attributes: JsonObject;
  /** Ids of the groups the resource names (SCIM_MEMBERSHIP_USER_MODE only; null when it names none). */
  groups: string[] | null;
}

/** A group as a user resource shows it (SCIM_MEMBERSHIP_USER_MODE). */
export interface UserGroup {
  id: string;
  display_name: string;
}

/** Attributes with a column of their own, or never kept (password, meta, read-only ones). */
const NOT_KEPT = new Set(['schemas', 'id', 'meta', 'username', 'externalid', 'active', 'password', 'groups']);
const MAX_ATTRIBUTES_BYTES = 32 * 1024;
const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;

function text(resource: JsonObject, attr: string, label: string, options: { required: boolean; max: number }) {
  const value = read(resource, attr);
  if (value === undefined || value === null || value === '') {
    if (options.required) throw scimInvalid('invalidValue', `${label} is required.`);
    return null;
  }
  if (typeof value !== 'string' || value.trim().length === 0 || value.length > options.max)
    throw scimInvalid('invalidValue', `${label} must be a string of 1 to ${options.max} characters.`);
  return value.trim();
}

/** The address svcgw uses: the primary e-mail, else the work one, else the first, else userName when it is one. */
function chooseEmail(emails: unknown, userName: string): string {
  if (emails !== undefined && emails !== null) {
    if (
      !Array.isArray(emails) ||
      !emails.every((email) => isPlainObject(email) && typeof read(email, 'value') === 'string')
    )
      throw scimInvalid('invalidValue', 'emails must be a list of {"value": "<address>", "type", "primary"}.');
  }
  const list = Array.isArray(emails) ? emails.filter(isPlainObject) : [];
  const chosen =
    list.find((email) => asBoolean(read(email, 'primary')) === true) ??
    list.find((email) => textOf(read(email, 'type')).toLowerCase() === 'work') ??
    list[0];
  const value = chosen ? read(chosen, 'value') : userName;
  if (typeof value !== 'string' || value.length > 320 || !EMAIL_RE.test(value.trim()))
    throw scimInvalid(
      'invalidValue',
      chosen
        ? 'The e-mail address in emails is not an address.'
        : 'A user needs an e-mail address: in emails, or as a userName that is one.',
    );
  return value.trim();
}

/** Validates a user resource (POST, PUT, or the result of a PATCH) into what is stored. */
export function userFromResource(raw: unknown, options: { userMode: boolean }): UserInput {
  if (!isPlainObject(raw)) throw scimInvalid('invalidSyntax', 'The body must be a User resource (a JSON object).');
  const resource = canonicalise(raw) as JsonObject;
  const userName = text(resource, 'userName', 'userName', { required: true, max: 255 })!;
  const activeValue = read(resource, 'active');
  const active = activeValue === undefined || activeValue === null ? true : asBoolean(activeValue);
  if (active === undefined) throw scimInvalid('invalidValue', 'active must be a boolean.');
  const name = read(resource, 'name');
  if (name !== undefined && name !== null && !isPlainObject(name))
    throw scimInvalid('invalidValue', 'name must be an object.');
  const names = isPlainObject(name) ? name : {};

  const attributes: JsonObject = {};
  for (const [key, value] of Object.entries(resource)) {
    if (NOT_KEPT.has(key.toLowerCase()) || value === null || value === undefined) continue;
    attributes[key] = value;
  }
  const rest = Object.fromEntries(
    Object.entries(names).filter(([key, value]) => key !== 'givenName' && key !== 'familyName' && value !== null),
  );
  if (Object.keys(rest).length > 0) attributes.name = rest;
  else delete attributes.name;
  if (Buffer.byteLength(JSON.stringify(attributes)) > MAX_ATTRIBUTES_BYTES)
    throw scimInvalid('invalidValue', `The user's attributes take more than ${MAX_ATTRIBUTES_BYTES} bytes.`);

  return {
    userName,
    externalId: text(resource, 'externalId', 'externalId', { required: false, max: 255 }),
    email: chooseEmail(read(resource, 'emails'), userName),
    firstName: text(names, 'givenName', 'name.givenName', { required: false, max: 255 }),
    lastName: text(names, 'familyName', 'name.familyName', { required: false, max: 255 }),
    active,
    attributes,
    groups: options.userMode ? groupIds(read(resource, 'groups')) : null,
  };
}

function groupIds(groups: unknown): string[] | null {
  if (groups === undefined || groups === null) return null;
  if (!Array.isArray(groups)) throw scimInvalid('invalidValue', 'groups must be an array.');
  return groups.map((group: unknown, index) => {
    const value = isPlainObject(group) ? read(group, 'value') : group;
    if (typeof value !== 'string' || value.length === 0 || value.length > 255)
      throw scimInvalid('invalidValue', `groups[${index}].value must be a group id.`);
    return value;
  });
}

const parseAttributes = (row: UserRow): JsonObject =>
  row.scim_attributes ? (JSON.parse(row.scim_attributes) as JsonObject) : {};

/**
 * The user as SCIM shows it, without `meta`: also the starting point of a PATCH. A user who
 * joined another way (invite, single sign-on) shows their e-mail address as userName.
 */
export function userResource(row: UserRow, groups: readonly UserGroup[] | null, baseUrl: string): JsonObject {
  const attributes = cloneJson(parseAttributes(row));
  const { name: storedName, emails: storedEmails, ...others } = attributes;
  const name: JsonObject = { ...(isPlainObject(storedName) ? storedName : {}) };
  if (row.first_name !== null) name.givenName = row.first_name;
  if (row.last_name !== null) name.familyName = row.last_name;
  const emails =
    Array.isArray(storedEmails) &&
    storedEmails.some(
      (email) => isPlainObject(email) && textOf(read(email, 'value')).toLowerCase() === row.email.toLowerCase(),
    )
      ? storedEmails
      : [{ value: row.email, type: 'work', primary: true }];
  const extensions = Object.keys(others).filter((key) => key.startsWith('urn:'));
  return {
    schemas: [URN.user, ...extensions],
    id: row.id,
    ...(row.external_id ? { externalId: row.external_id } : {}),
    userName: row.scim_user_name ?? row.email,
    ...(Object.keys(name).length > 0 ? { name } : {}),
    emails,
    ...others,
    active: !row.deactivated_at,
    ...(groups === null
      ? {}
      : {
          groups: groups.map((group) => ({
            value: group.id,
            display: group.display_name,
            $ref: locationOf(baseUrl, 'Groups', group.id),
          })),
        }),
  };
}

export const userWithMeta = (row: UserRow, resource: JsonObject, baseUrl: string): JsonObject =>
  withMeta(resource, {
    resourceType: 'User',
    created: row.created_at,
    lastModified: row.last_updated_at,
    location: locationOf(baseUrl, 'Users', row.id),
  });
