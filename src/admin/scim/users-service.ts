import type { ApiKeyVerifier } from '../../auth/api-key-service.js';
import type { Principal } from '../../auth/principal.js';
import type { UserStatusEvents } from '../../auth/user-status.js';
import type { Clock } from '../../lib/clock.js';
import { isUuid, newId } from '../../lib/ids.js';
import type { ApiKeyRepository } from '../../storage/repositories/api-keys.js';
import type { ScimGroupRepository } from '../../storage/repositories/scim-groups.js';
import type { ScimUserCondition, ScimUserPatch, ScimUserRepository } from '../../storage/repositories/scim-users.js';
import type { UserRepository, UserRow } from '../../storage/repositories/users.js';
import { createLockoutGuard } from '../api-keys/lockout-guard.js';
import { isPlainObject, read, type JsonObject } from './protocol/attributes.js';
import type { ListQuery } from './protocol/list-query.js';
import type { UserFilterAttr } from './filter-attributes.js';
import type { MembershipSync } from './membership-sync.js';
import { applyPatch, patchOperations } from './protocol/patch.js';
import { assertIfMatch } from './protocol/preconditions.js';
import { versionOf } from './protocol/resource-meta.js';
import { scimConflict, scimInvalid, scimNotFound, ScimError } from './protocol/scim-errors.js';
import { userFromResource, userResource, userWithMeta, type UserInput } from './protocol/user-resource.js';

/** A user as an answer shows it, and the row it came from. */
export interface ScimUserView {
  row: UserRow;
  resource: JsonObject;
  version: string;
}

/**
 * The SCIM Users endpoint over svcgw's users. Every user of the organisation is visible (people
 * who joined by invite show their e-mail address as userName, so a provider can match and claim
 * them). Deactivation suspends: the user's keys are refused, and sessions end through the
 * user-status events, until the provider sets `active` again; DELETE removes the user as
 * DELETE /v1/users does. The organisation's last owner, or the holder of its last admin key,
 * is never deactivated or deleted.
 */
export function createScimUserService(deps: {
  scimUsers: ScimUserRepository;
  users: Pick<UserRepository, 'remove'>;
  groups: Pick<ScimGroupRepository, 'existingIds' | 'groupIdsOf' | 'addMember' | 'removeMember'>;
  apiKeys: Pick<ApiKeyRepository, 'countAdministeringKeys'>;
  sync: MembershipSync;
  verifier: Pick<ApiKeyVerifier, 'invalidateAll'>;
  userStatus: UserStatusEvents;
  clock: Clock;
  userMode: boolean;
}) {
  const now = () => new Date(deps.clock.now()).toISOString();
  const lockout = createLockoutGuard(deps.apiKeys, now);

  async function find(principal: Principal, id: string): Promise<UserRow> {
    const row = isUuid(id) ? await deps.scimUsers.findById(principal.organisationId, id) : undefined;
    if (!row) throw scimNotFound('User', id);
    return row;
  }

  async function view(row: UserRow, baseUrl: string): Promise<ScimUserView> {
    const groups = deps.userMode ? ((await deps.scimUsers.groupsOf([row.id])).get(row.id) ?? []) : null;
    const resource = userResource(row, groups, baseUrl);
    return { row, resource: userWithMeta(row, resource, baseUrl), version: versionOf(resource) };
  }

  /** The user a userName or e-mail belongs to, other than `self`; a clash is a 409 uniqueness. */
  async function assertUnique(organisationId: string, input: UserInput, self: string | null): Promise<void> {
    const others = (await deps.scimUsers.findClaimants(organisationId, input.userName, input.email)).filter(
      (row) => row.id !== self,
    );
    const userName = input.userName.toLowerCase();
    if (others.some((row) => (row.scim_user_name ?? row.email).toLowerCase() === userName))
      throw scimConflict(`Another user already has the userName ${input.userName}.`);
    if (others.some((row) => row.email.toLowerCase() === input.email.toLowerCase()))
      throw scimConflict(`Another user already has the e-mail address ${input.email}.`);
  }

  /** Before a user is deactivated or deleted: the organisation keeps an owner and an admin key. */
  async function assertMayGo(row: UserRow, verb: 'deactivated' | 'deleted'): Promise<void> {
    if (
      row.role === 'owner' &&
      !row.deactivated_at &&
      (await deps.scimUsers.countActiveOwners(row.organisation_id)) <= 1
    )
      throw new ScimError(
        'INVALID_REQUEST',
        `The last active owner of the organisation cannot be ${verb}.`,
        'mutability',
      );
    if (!row.deactivated_at)
      await lockout.assertUserMayGo(row.organisation_id, row.id, verb === 'deleted' ? 'removed' : verb);
  }

  /** Sets the groups a user is in (SCIM_MEMBERSHIP_USER_MODE); unknown group ids are a 400. */
  async function setGroups(organisationId: string, userId: string, groupIds: readonly string[]): Promise<void> {
    const wanted = new Set(groupIds);
    const known = await deps.groups.existingIds(organisationId, [...wanted].filter(isUuid));
    const unknown = [...wanted].find((id) => !known.has(id));
    if (unknown !== undefined) throw scimInvalid('invalidValue', `Group ${unknown} does not exist.`);
    const current = new Set(await deps.groups.groupIdsOf(userId));
    const stamp = now();
    for (const id of wanted) if (!current.has(id)) await deps.groups.addMember(id, userId, stamp);
    for (const id of current) if (!wanted.has(id)) await deps.groups.removeMember(id, userId);
    await deps.sync.syncUsers([userId]);
  }

  /** Writes a validated resource over an existing user; active changes take effect at once. */
  async function save(row: UserRow, input: UserInput): Promise<UserRow> {
    await assertUnique(row.organisation_id, input, row.id);
    const stamp = now();
    const patch: ScimUserPatch = {
      email: input.email,
      first_name: input.firstName,
      last_name: input.lastName,
      scim_user_name: input.userName,
      external_id: input.externalId,
      scim_attributes: JSON.stringify(input.attributes),
    };
    const deactivating = !input.active && !row.deactivated_at;
    const reactivating = input.active && !!row.deactivated_at;
    if (deactivating) {
      await assertMayGo(row, 'deactivated');
      patch.deactivated_at = stamp;
    }
    if (reactivating) patch.deactivated_at = null;
    const changed = Object.entries(patch).some(([key, value]) => row[key as keyof UserRow] !== value);
    let saved = row;
    if (changed) {
      patch.last_updated_at = stamp;
      await deps.scimUsers.update(row.id, patch);
      saved = { ...row, ...patch };
    }
    if (input.groups !== null) await setGroups(row.organisation_id, row.id, input.groups);
    if (deactivating || reactivating) {
      deps.verifier.invalidateAll();
      await deps.userStatus.emit({
        organisationId: row.organisation_id,
        userId: row.id,
        status: deactivating ? 'deactivated' : 'reactivated',
      });
    }
    return saved;
  }

  return {
    async list(principal: Principal, query: ListQuery<UserFilterAttr>, baseUrl: string) {
      const conditions = query.conditions.map(({ attr, value }): ScimUserCondition => {
        if (attr === 'active') {
          if (typeof value !== 'boolean') throw scimInvalid('invalidFilter', 'active compares with true or false.');
          return { attr, value };
        }
        if (typeof value !== 'string') throw scimInvalid('invalidFilter', `${attr} compares with a string.`);
        return { attr, value };
      });
      const { total, rows } = await deps.scimUsers.list(principal.organisationId, conditions, {
        limit: query.count,
        offset: query.startIndex - 1,
      });
      const groups = deps.userMode ? await deps.scimUsers.groupsOf(rows.map((row) => row.id)) : null;
      const resources = rows.map((row) =>
        userWithMeta(row, userResource(row, groups ? (groups.get(row.id) ?? []) : null, baseUrl), baseUrl),
      );
      return { total, resources };
    },

    get: async (principal: Principal, id: string, baseUrl: string) => view(await find(principal, id), baseUrl),

    /**
     * Provisions a user. A person who already joined another way (same e-mail address, not yet
     * claimed by a provider) is claimed rather than duplicated.
     */
    async create(principal: Principal, body: unknown, baseUrl: string): Promise<ScimUserView> {
      const input = userFromResource(body, { userMode: deps.userMode });
      const claimants = await deps.scimUsers.findClaimants(principal.organisationId, input.userName, input.email);
      const unclaimed = claimants.filter((row) => row.scim_user_name === null);
      if (claimants.length === 1 && unclaimed.length === 1) return view(await save(unclaimed[0]!, input), baseUrl);
      await assertUnique(principal.organisationId, input, null);
      const stamp = now();
      const row: UserRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        email: input.email,
        first_name: input.firstName,
        last_name: input.lastName,
        role: 'member',
        created_at: stamp,
        last_updated_at: stamp,
        scim_user_name: input.userName,
        external_id: input.externalId,
        scim_attributes: JSON.stringify(input.attributes),
        deactivated_at: input.active ? null : stamp,
      };
      await deps.scimUsers.insert(row);
      if (input.groups !== null) await setGroups(principal.organisationId, row.id, input.groups);
      return view(row, baseUrl);
    },

    /** PUT: the resource replaces the user's SCIM attributes; `active` left out keeps its state. */
    async replace(principal: Principal, id: string, body: unknown, ifMatch: string | undefined, baseUrl: string) {
      const row = await find(principal, id);
      assertIfMatch(ifMatch, (await view(row, baseUrl)).version);
      const given = isPlainObject(body) ? read(body, 'active') : undefined;
      const withActive = isPlainObject(body) && given === undefined ? { ...body, active: !row.deactivated_at } : body;
      return view(await save(row, userFromResource(withActive, { userMode: deps.userMode })), baseUrl);
    },

    async patch(principal: Principal, id: string, body: unknown, ifMatch: string | undefined, baseUrl: string) {
      const row = await find(principal, id);
      const current = await view(row, baseUrl);
      assertIfMatch(ifMatch, current.version);
      const operations = patchOperations(body);
      const groups = deps.userMode ? ((await deps.scimUsers.groupsOf([row.id])).get(row.id) ?? []) : null;
      const resource = userResource(row, groups, baseUrl);
      applyPatch(resource, operations);
      if (!deps.userMode && Object.keys(resource).some((key) => key.toLowerCase() === 'groups'))
        throw scimInvalid(
          'mutability',
          'groups is read-only on users: membership is managed through the Groups endpoint (unless SCIM_MEMBERSHIP_USER_MODE=ON).',
        );
      return view(await save(row, userFromResource(resource, { userMode: deps.userMode })), baseUrl);
    },

    /** Deletes the user: memberships go and every key of theirs is revoked, at once. */
    async remove(principal: Principal, id: string, ifMatch: string | undefined, baseUrl: string): Promise<void> {
      const row = await find(principal, id);
      assertIfMatch(ifMatch, (await view(row, baseUrl)).version);
      await assertMayGo(row, 'deleted');
      await deps.users.remove(row.id, now());
      deps.verifier.invalidateAll();
      await deps.userStatus.emit({ organisationId: row.organisation_id, userId: row.id, status: 'deleted' });
    },
  };
}

export type ScimUserService = ReturnType<typeof createScimUserService>;
