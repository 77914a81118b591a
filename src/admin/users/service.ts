import type { ApiKeyVerifier } from '../../auth/api-key-service.js';
import { isOrgAdmin, type Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { ApiKeyRepository } from '../../storage/repositories/api-keys.js';
import type { UserRepository, UserRow } from '../../storage/repositories/users.js';
import { createLockoutGuard } from '../api-keys/lockout-guard.js';
import { pageWindow } from '../shared/pagination.js';
import type { ListUsersQuery, UpdateUserBody, UserObject } from './schemas.js';

/**
 * The organisation's people. Anyone with an admin key and the scope reads them; only owners and
 * admins change them; owners are made at bootstrap and never made or unmade here, and an admin
 * cannot touch an owner. Keys act with their user's current role, so every change drops the
 * verifier's cache: the new role applies from the next request.
 */
export function createUserService(deps: {
  users: UserRepository;
  apiKeys: Pick<ApiKeyRepository, 'countAdministeringKeys'>;
  verifier: ApiKeyVerifier;
  clock: Clock;
}) {
  const now = () => new Date(deps.clock.now()).toISOString();
  const lockout = createLockoutGuard(deps.apiKeys, now);

  async function find(principal: Principal, id: string): Promise<UserRow> {
    const row = isUuid(id) ? await deps.users.findById(principal.organisationId, id) : undefined;
    if (!row) throw notFound('User', 'userId');
    return row;
  }

  function assertMayChange(principal: Principal, target: UserRow): void {
    if (!isOrgAdmin(principal))
      throw new AppError('ROLE_NOT_ALLOWED', 'Only organisation owners and admins change users.');
    if (target.role === 'owner' && principal.orgRole !== 'owner')
      throw new AppError('ROLE_NOT_ALLOWED', 'An admin cannot change or remove an owner.');
  }

  async function toObjects(rows: UserRow[]): Promise<UserObject[]> {
    const workspaces = await deps.users.workspaceIdsOf(rows.map((row) => row.id));
    return rows.map((row) => toUserObject(row, workspaces.get(row.id) ?? []));
  }

  return {
    async list(principal: Principal, query: ListUsersQuery) {
      const { total, rows } = await deps.users.list({
        organisationId: principal.organisationId,
        role: query.role,
        email: query.email,
        ...pageWindow(query),
      });
      return { total, data: await toObjects(rows) };
    },

    async get(principal: Principal, id: string): Promise<UserObject> {
      const [object] = await toObjects([await find(principal, id)]);
      return object!;
    },

    /** Makes a user an admin or a member; the owner role is out of reach of this route. */
    async update(principal: Principal, id: string, body: UpdateUserBody): Promise<UserRow> {
      const row = await find(principal, id);
      assertMayChange(principal, row);
      if (row.role === 'owner')
        throw new AppError('ROLE_NOT_ALLOWED', 'The owner role is not changed through the API.', { param: 'role' });
      if (row.role !== body.role) {
        if (row.role === 'admin') await lockout.assertUserMayGo(principal.organisationId, row.id, 'demoted');
        await deps.users.update(row.id, { role: body.role, last_updated_at: now() });
        deps.verifier.invalidateAll();
      }
      return { ...row, role: body.role };
    },

    /** Removes a user: memberships go and every key of theirs stops working at once. */
    async remove(principal: Principal, id: string): Promise<UserRow> {
      const row = await find(principal, id);
      assertMayChange(principal, row);
      if (row.role === 'owner' && (await deps.users.countOwners(principal.organisationId)) <= 1) {
        throw new AppError('INVALID_REQUEST', 'The last owner of the organisation cannot be removed.', {
          param: 'userId',
        });
      }
      await lockout.assertUserMayGo(principal.organisationId, row.id, 'removed');
      await deps.users.remove(row.id, now());
      deps.verifier.invalidateAll();
      return row;
    },
  };
}

export type UserService = ReturnType<typeof createUserService>;

export function toUserObject(row: UserRow, workspaceIds: string[]): UserObject {
  return {
    object: 'user',
    id: row.id,
    first_name: row.first_name,
    last_name: row.last_name,
    role: row.role,
    email: row.email,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    workspace_ids: workspaceIds,
  };
}
