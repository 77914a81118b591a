import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { isUuid, newId } from '../../lib/ids.js';
import type { ScimGroupCondition, ScimGroupRepository, ScimGroupRow } from '../../storage/repositories/scim-groups.js';
import type { ScimMappingRepository } from '../../storage/repositories/scim-mappings.js';
import type { ScimUserRepository } from '../../storage/repositories/scim-users.js';
import { isPlainObject, type JsonObject } from './protocol/attributes.js';
import { groupFromResource, groupResource, groupWithMeta, type GroupInput } from './protocol/group-resource.js';
import { shows, type ListQuery } from './protocol/list-query.js';
import type { GroupFilterAttr } from './filter-attributes.js';
import type { MembershipSync } from './membership-sync.js';
import { applyPatch, patchOperations, type PatchOperation } from './protocol/patch.js';
import { parsePath } from './protocol/paths.js';
import { assertIfMatch } from './protocol/preconditions.js';
import { versionOf } from './protocol/resource-meta.js';
import { scimConflict, scimInvalid, scimNotFound } from './protocol/scim-errors.js';

export interface ScimGroupView {
  row: ScimGroupRow;
  resource: JsonObject;
  version: string;
}

const targetsMembers = (path: string): boolean => parsePath(path).attr?.toLowerCase() === 'members';

/**
 * Member operations of a PATCH are skipped under SCIM_MEMBERSHIP_USER_MODE, as the spec says:
 * membership is then the Users endpoint's to manage.
 */
function withoutMemberOperations(operations: readonly PatchOperation[]): PatchOperation[] {
  return operations.flatMap((operation) => {
    if (operation.path !== null) return targetsMembers(operation.path) ? [] : [operation];
    if (!isPlainObject(operation.value)) return [operation];
    const value = Object.fromEntries(Object.entries(operation.value).filter(([key]) => !targetsMembers(key)));
    return Object.keys(value).length === 0 ? [] : [{ ...operation, value }];
  });
}

/**
 * The SCIM Groups endpoint. Display names are unique per organisation (mappings may name a group
 * by it); a group's members are users of the organisation. Any change of members, and a new
 * group whose name a mapping waits for, brings the members' workspace memberships in step.
 */
export function createScimGroupService(deps: {
  groups: ScimGroupRepository;
  scimUsers: Pick<ScimUserRepository, 'existingIds'>;
  mappings: Pick<ScimMappingRepository, 'linkPending' | 'unlinkGroup'>;
  sync: MembershipSync;
  clock: Clock;
  userMode: boolean;
}) {
  const now = () => new Date(deps.clock.now()).toISOString();

  async function find(principal: Principal, id: string): Promise<ScimGroupRow> {
    const row = isUuid(id) ? await deps.groups.findById(principal.organisationId, id) : undefined;
    if (!row) throw scimNotFound('Group', id);
    return row;
  }

  async function view(row: ScimGroupRow, baseUrl: string): Promise<ScimGroupView> {
    const members = (await deps.groups.membersOf([row.id])).get(row.id) ?? [];
    const resource = groupResource(row, members, baseUrl);
    return { row, resource: groupWithMeta(row, resource, baseUrl), version: versionOf(resource) };
  }

  async function assertNameFree(organisationId: string, name: string, self: string | null): Promise<void> {
    const holder = await deps.groups.findByName(organisationId, name);
    if (holder && holder.id !== self) throw scimConflict(`Another group is already named ${name}.`);
  }

  /** Sets the members to `wanted`; unknown user ids are a 400. Returns the users whose membership changed. */
  async function setMembers(row: ScimGroupRow, wanted: readonly string[]): Promise<string[]> {
    const known = await deps.scimUsers.existingIds(row.organisation_id, wanted.filter(isUuid));
    const unknown = wanted.find((id) => !known.has(id));
    if (unknown !== undefined) throw scimInvalid('invalidValue', `User ${unknown} does not exist.`);
    const current = new Set(await deps.groups.memberIds(row.id));
    const next = new Set(wanted);
    const stamp = now();
    const touched: string[] = [];
    for (const id of next)
      if (!current.has(id)) {
        await deps.groups.addMember(row.id, id, stamp);
        touched.push(id);
      }
    for (const id of current)
      if (!next.has(id)) {
        await deps.groups.removeMember(row.id, id);
        touched.push(id);
      }
    return touched;
  }

  /** Writes a validated resource over a group and brings memberships in step. */
  async function save(row: ScimGroupRow, input: GroupInput): Promise<ScimGroupRow> {
    const renamed = input.displayName !== row.display_name;
    if (renamed) await assertNameFree(row.organisation_id, input.displayName, row.id);
    let saved = row;
    if (renamed || input.externalId !== row.external_id) {
      const patch = { display_name: input.displayName, external_id: input.externalId, last_updated_at: now() };
      await deps.groups.update(row.id, patch);
      saved = { ...row, ...patch };
    }
    const touched = input.members === null ? [] : await setMembers(saved, input.members);
    const linked = renamed ? await deps.mappings.linkPending(row.organisation_id, input.displayName, row.id, now()) : 0;
    await deps.sync.syncUsers(linked > 0 ? await deps.groups.memberIds(row.id) : touched);
    return saved;
  }

  return {
    async list(principal: Principal, query: ListQuery<GroupFilterAttr>, baseUrl: string) {
      const conditions = query.conditions.map(({ attr, value }): ScimGroupCondition => {
        if (typeof value !== 'string') throw scimInvalid('invalidFilter', `${attr} compares with a string.`);
        return { attr, value };
      });
      const { total, rows } = await deps.groups.list(principal.organisationId, conditions, {
        limit: query.count,
        offset: query.startIndex - 1,
      });
      // Members are read only when shown (providers ask for excludedAttributes=members to keep lists light).
      const members = shows(query.projection, 'members')
        ? await deps.groups.membersOf(rows.map((row) => row.id))
        : null;
      const resources = rows.map((row) => {
        const resource = groupWithMeta(
          row,
          groupResource(row, members ? (members.get(row.id) ?? []) : null, baseUrl),
          baseUrl,
        );
        // A version computed without the members would not be the group's: leave it out.
        if (!members) delete (resource.meta as JsonObject).version;
        return resource;
      });
      return { total, resources };
    },

    get: async (principal: Principal, id: string, baseUrl: string) => view(await find(principal, id), baseUrl),

    async create(principal: Principal, body: unknown, baseUrl: string): Promise<ScimGroupView> {
      const input = groupFromResource(body, { userMode: deps.userMode });
      await assertNameFree(principal.organisationId, input.displayName, null);
      const stamp = now();
      const row: ScimGroupRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        display_name: input.displayName,
        external_id: input.externalId,
        created_at: stamp,
        last_updated_at: stamp,
      };
      await deps.groups.insert(row);
      if (input.members !== null) await setMembers(row, input.members);
      await deps.mappings.linkPending(row.organisation_id, row.display_name, row.id, stamp);
      await deps.sync.syncUsers(input.members ?? []);
      return view(row, baseUrl);
    },

    /** PUT: members left out of the resource are removed (RFC 7644 §3.5.1), except in user mode. */
    async replace(principal: Principal, id: string, body: unknown, ifMatch: string | undefined, baseUrl: string) {
      const row = await find(principal, id);
      assertIfMatch(ifMatch, (await view(row, baseUrl)).version);
      const input = groupFromResource(body, { userMode: deps.userMode });
      return view(await save(row, deps.userMode ? input : { ...input, members: input.members ?? [] }), baseUrl);
    },

    async patch(principal: Principal, id: string, body: unknown, ifMatch: string | undefined, baseUrl: string) {
      const row = await find(principal, id);
      const current = await view(row, baseUrl);
      assertIfMatch(ifMatch, current.version);
      let operations = patchOperations(body);
      if (deps.userMode) operations = withoutMemberOperations(operations);
      const resource = groupResource(row, (await deps.groups.membersOf([row.id])).get(row.id) ?? [], baseUrl);
      applyPatch(resource, operations);
      const input = groupFromResource(resource, { userMode: deps.userMode });
      // A PATCH that removed every member leaves no members attribute: that is an empty list.
      const members = deps.userMode ? null : (input.members ?? []);
      return view(await save(row, { ...input, members }), baseUrl);
    },

    /** Deletes a group; its mappings wait under its name for a group of that name to come back. */
    async remove(principal: Principal, id: string, ifMatch: string | undefined, baseUrl: string): Promise<void> {
      const row = await find(principal, id);
      assertIfMatch(ifMatch, (await view(row, baseUrl)).version);
      const members = await deps.groups.memberIds(row.id);
      await deps.mappings.unlinkGroup(row.id, row.display_name, now());
      await deps.groups.remove(row.id);
      await deps.sync.syncUsers(members);
    },
  };
}

export type ScimGroupService = ReturnType<typeof createScimGroupService>;
