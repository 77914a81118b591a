import type { ScimGroupMember, ScimGroupRow } from '../../../storage/repositories/scim-groups.js';
import { canonicalise, isPlainObject, read, type JsonObject } from './attributes.js';
import { locationOf, withMeta } from './resource-meta.js';
import { scimInvalid } from './scim-errors.js';
import { URN } from './schema-urns.js';

export interface GroupInput {
  displayName: string;
  externalId: string | null;
  /** User ids of the members the resource names; null when it names none (or in SCIM_MEMBERSHIP_USER_MODE). */
  members: string[] | null;
}

/** Validates a group resource (POST, PUT, or the result of a PATCH) into what is stored. */
export function groupFromResource(raw: unknown, options: { userMode: boolean }): GroupInput {
  if (!isPlainObject(raw)) throw scimInvalid('invalidSyntax', 'The body must be a Group resource (a JSON object).');
  const resource = canonicalise(raw) as JsonObject;
  const displayName = read(resource, 'displayName');
  if (typeof displayName !== 'string' || displayName.trim().length === 0 || displayName.length > 255)
    throw scimInvalid('invalidValue', 'displayName is required: a string of 1 to 255 characters.');
  const externalId = read(resource, 'externalId');
  if (externalId !== undefined && externalId !== null && (typeof externalId !== 'string' || externalId.length > 255))
    throw scimInvalid('invalidValue', 'externalId must be a string of at most 255 characters.');
  return {
    displayName: displayName.trim(),
    externalId: typeof externalId === 'string' && externalId.length > 0 ? externalId : null,
    members: options.userMode ? null : memberIds(read(resource, 'members')),
  };
}

function memberIds(members: unknown): string[] | null {
  if (members === undefined || members === null) return null;
  if (!Array.isArray(members)) throw scimInvalid('invalidValue', 'members must be an array.');
  const ids = members.map((member, index) => {
    const value = isPlainObject(member) ? read(member, 'value') : undefined;
    if (typeof value !== 'string' || value.length === 0 || value.length > 255)
      throw scimInvalid('invalidValue', `members[${index}].value must be a user id.`);
    const type = read(member as JsonObject, 'type');
    if (typeof type === 'string' && type.toLowerCase() === 'group')
      throw scimInvalid('invalidValue', `members[${index}] is a group: groups within groups are not supported.`);
    return value;
  });
  return [...new Set(ids)];
}

/** The group as SCIM shows it, without `meta`: also the starting point of a PATCH. */
export function groupResource(
  row: ScimGroupRow,
  members: readonly ScimGroupMember[] | null,
  baseUrl: string,
): JsonObject {
  return {
    schemas: [URN.group],
    id: row.id,
    ...(row.external_id ? { externalId: row.external_id } : {}),
    displayName: row.display_name,
    ...(members === null
      ? {}
      : {
          members: members.map((member) => ({
            value: member.user_id,
            display: member.display,
            type: 'User',
            $ref: locationOf(baseUrl, 'Users', member.user_id),
          })),
        }),
  };
}

export const groupWithMeta = (row: ScimGroupRow, resource: JsonObject, baseUrl: string): JsonObject =>
  withMeta(resource, {
    resourceType: 'Group',
    created: row.created_at,
    lastModified: row.last_updated_at,
    location: locationOf(baseUrl, 'Groups', row.id),
  });
