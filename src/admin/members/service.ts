import type { ApiKeyVerifier } from '../../auth/api-key-service.js';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { MemberRepository, MemberRow } from '../../storage/repositories/members.js';
import type { UserRepository } from '../../storage/repositories/users.js';
import type { WorkspaceRepository, WorkspaceRow } from '../../storage/repositories/workspaces.js';
import type { WorkspaceRole } from '../../storage/schema.js';
import { pageWindow } from '../shared/pagination.js';
import { effectiveWorkspaceRole, resolveWorkspace } from '../shared/workspace-access.js';
import { managesMembers, memberStanding, roleWithin } from './roles.js';
import { memberScopes } from '../invites/first-key.js';
import type { AddMembersBody, ListMembersQuery, MemberObject, UpdateMemberBody } from './schemas.js';

/**
 * Workspace membership. Owners and admins manage every workspace; a workspace's managers and
 * admins manage their own, and never grant (or touch someone holding) a role above their own:
 * the spec's rule that a manager cannot add a user with a higher privilege (403
 * ROLE_NOT_ALLOWED). Keys act with their user's current membership, so every change drops the
 * verifier's cache.
 */
export function createMemberService(deps: {
  members: MemberRepository;
  users: UserRepository;
  workspaces: WorkspaceRepository;
  verifier: ApiKeyVerifier;
  clock: Clock;
}) {
  const now = () => new Date(deps.clock.now()).toISOString();

  async function workspaceOf(
    principal: Principal,
    idOrSlug: string,
    options: { change: boolean },
  ): Promise<WorkspaceRow> {
    const workspace = await resolveWorkspace(deps.workspaces, principal, idOrSlug, {
      required: true,
      param: 'workspaceId',
    });
    if (!workspace) throw notFound('Workspace', 'workspaceId');
    if (options.change && workspace.status !== 'active')
      throw invalid('workspaceId', `Workspace ${workspace.slug} is archived; unarchive it first.`);
    return workspace;
  }

  function managerRole(principal: Principal, workspace: WorkspaceRow): WorkspaceRole {
    const role = effectiveWorkspaceRole(principal, workspace.id);
    if (!managesMembers(role))
      throw new AppError(
        'ROLE_NOT_ALLOWED',
        'Only workspace managers and admins (and organisation owners and admins) manage members.',
      );
    return role;
  }

  async function findMember(workspace: WorkspaceRow, userId: string): Promise<MemberRow> {
    const row = isUuid(userId) ? await deps.members.find(workspace.id, userId) : undefined;
    if (!row) throw notFound('Member', 'userId');
    return row;
  }

  /** A manager cannot change or remove someone who stands above them (an admin, or an organisation admin). */
  function assertOutranks(callerRole: WorkspaceRole, target: MemberRow): void {
    if (!roleWithin(memberStanding(target.org_role, target.role), callerRole)) {
      throw new AppError(
        'ROLE_NOT_ALLOWED',
        `A workspace ${callerRole} cannot change a member who holds a higher role.`,
        { param: 'userId' },
      );
    }
  }

  return {
    async list(principal: Principal, idOrSlug: string, query: ListMembersQuery) {
      const workspace = await workspaceOf(principal, idOrSlug, { change: false });
      const { total, rows } = await deps.members.list({
        workspaceId: workspace.id,
        role: query.role,
        email: query.email,
        ...pageWindow(query),
      });
      return { total, data: rows.map(toMemberObject) };
    },

    async get(principal: Principal, idOrSlug: string, userId: string): Promise<MemberObject> {
      const workspace = await workspaceOf(principal, idOrSlug, { change: false });
      return toMemberObject(await findMember(workspace, userId));
    },

    async add(principal: Principal, idOrSlug: string, body: AddMembersBody): Promise<WorkspaceRow> {
      const workspace = await workspaceOf(principal, idOrSlug, { change: true });
      const callerRole = managerRole(principal, workspace);
      const seen = new Set<string>();
      for (const [index, entry] of body.users.entries()) {
        if (seen.has(entry.id)) throw invalid(`users[${index}].id`, `User ${entry.id} is listed twice.`);
        seen.add(entry.id);
        if (!roleWithin(entry.role, callerRole)) {
          throw new AppError('ROLE_NOT_ALLOWED', `A workspace ${callerRole} cannot grant the role ${entry.role}.`, {
            param: `users[${index}].role`,
          });
        }
        if (!(await deps.users.findById(principal.organisationId, entry.id)))
          throw new AppError('NOT_FOUND', `User ${entry.id} not found.`, { param: `users[${index}].id` });
        if (await deps.members.find(workspace.id, entry.id))
          throw new AppError('CONFLICT', `User ${entry.id} is already a member; change their role with PUT.`, {
            param: `users[${index}].id`,
          });
      }
      await deps.members.add(
        workspace.id,
        body.users.map((entry) => ({ userId: entry.id, role: entry.role })),
        now(),
      );
      deps.verifier.invalidateAll();
      return workspace;
    },

    async update(
      principal: Principal,
      idOrSlug: string,
      userId: string,
      body: UpdateMemberBody,
    ): Promise<WorkspaceRow> {
      const workspace = await workspaceOf(principal, idOrSlug, { change: true });
      const callerRole = managerRole(principal, workspace);
      const member = await findMember(workspace, userId);
      assertOutranks(callerRole, member);
      if (!roleWithin(body.role, callerRole))
        throw new AppError('ROLE_NOT_ALLOWED', `A workspace ${callerRole} cannot grant the role ${body.role}.`, {
          param: 'role',
        });
      if (member.role !== body.role) {
        await deps.members.updateRole(workspace.id, member.user_id, body.role, now());
        deps.verifier.invalidateAll();
      }
      return workspace;
    },

    /** Ends a membership; the user's own keys in the workspace are revoked with it. */
    async remove(principal: Principal, idOrSlug: string, userId: string): Promise<WorkspaceRow> {
      const workspace = await workspaceOf(principal, idOrSlug, { change: true });
      const callerRole = managerRole(principal, workspace);
      const member = await findMember(workspace, userId);
      assertOutranks(callerRole, member);
      await deps.members.remove(workspace.id, member.user_id, now());
      deps.verifier.invalidateAll();
      return workspace;
    },
  };
}

export type MemberService = ReturnType<typeof createMemberService>;

export function toMemberObject(row: MemberRow): MemberObject {
  return {
    object: 'workspace-user',
    id: row.user_id,
    first_name: row.first_name,
    last_name: row.last_name,
    org_role: row.org_role,
    role: row.role,
    email: row.email,
    workspace_id: row.workspace_id,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at ?? row.created_at,
    status: 'active',
    scopes: memberScopes(row.org_role, row.role),
    settings: null,
  };
}
