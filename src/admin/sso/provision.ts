import type { SsoIdentity } from '../../auth/sso/identity.js';
import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { InviteRepository } from '../../storage/repositories/invites.js';
import type { SsoRepository } from '../../storage/repositories/sso.js';
import type { UserRepository, UserRow } from '../../storage/repositories/users.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import { uniqueViolation } from '../../storage/unique-violation.js';
import type { Provisioning } from './schemas.js';

/** How the user was found: already there, made from their pending invite, or made on first sign-in. */
export type ProvisionedBy = 'existing' | 'invite' | 'created';

/**
 * The user a single sign-on stands for (spec: "automatically provisions first-time users and
 * accepts pending invites"). The identity provider is the organisation's own, so its e-mail
 * address names the user; an address the provider says is not verified is refused. A first-time
 * address with a pending invite accepts it (its role and workspaces, no API key: the session is
 * how they start); otherwise, when the organisation allows it, the user is created as an
 * organisation member of the default workspace of `provisioning`.
 */
export function createProvisioner(deps: {
  users: UserRepository;
  invites: InviteRepository;
  workspaces: WorkspaceRepository;
  sso: SsoRepository;
  clock: Clock;
}) {
  const nowIso = () => new Date(deps.clock.now()).toISOString();

  async function fromInvite(organisationId: string, identity: SsoIdentity): Promise<UserRow | null> {
    const stamp = nowIso();
    const invite = await deps.invites.findOpenForEmail(organisationId, identity.email, stamp);
    if (!invite) return null;
    const grants = (await deps.invites.workspacesOf([invite.id])).get(invite.id) ?? [];
    const active = [];
    for (const grant of grants)
      if ((await deps.workspaces.findById(grant.workspace_id))?.status === 'active') active.push(grant);
    const user: UserRow = {
      id: newId(),
      organisation_id: organisationId,
      email: invite.email,
      first_name: identity.firstName,
      last_name: identity.lastName,
      role: invite.role,
      created_at: stamp,
      last_updated_at: stamp,
    };
    const accepted = await deps.invites.accept({
      inviteId: invite.id,
      now: stamp,
      user,
      memberships: active.map((grant) => ({ workspaceId: grant.workspace_id, role: grant.role })),
      key: null,
    });
    // Not accepted: a concurrent sign-in accepted it first (and made the user), or it just expired.
    return accepted ? user : ((await deps.users.findByEmail(organisationId, identity.email)) ?? null);
  }

  async function created(organisationId: string, identity: SsoIdentity, provisioning: Provisioning) {
    const workspace =
      provisioning.default_workspace === null
        ? await deps.workspaces.findDefault(organisationId)
        : await deps.workspaces.findByIdOrSlug(organisationId, provisioning.default_workspace);
    const stamp = nowIso();
    const user: UserRow = {
      id: newId(),
      organisation_id: organisationId,
      email: identity.email,
      first_name: identity.firstName,
      last_name: identity.lastName,
      role: 'member',
      created_at: stamp,
      last_updated_at: stamp,
    };
    const memberships =
      workspace && workspace.status === 'active'
        ? [{ workspaceId: workspace.id, role: provisioning.default_workspace_role }]
        : [];
    await deps.sso.insertUser(user, memberships);
    return user;
  }

  return {
    async provision(
      organisationId: string,
      identity: SsoIdentity,
      provisioning: Provisioning,
    ): Promise<{ user: UserRow; by: ProvisionedBy }> {
      if (identity.emailVerified === false)
        throw new AppError(
          'SSO_USER_NOT_PROVISIONED',
          `The identity provider says ${identity.email} is not verified; verify it there first.`,
        );
      const existing = await deps.users.findByEmail(organisationId, identity.email);
      if (existing) return { user: existing, by: 'existing' };
      try {
        const invited = await fromInvite(organisationId, identity);
        if (invited) return { user: invited, by: 'invite' };
        if (!provisioning.create_users)
          throw new AppError(
            'SSO_USER_NOT_PROVISIONED',
            `There is no user ${identity.email} and no pending invite for it; ask an organisation admin to invite you.`,
          );
        return { user: await created(organisationId, identity, provisioning), by: 'created' };
      } catch (error) {
        // Two first sign-ins of one address at once: the other one made the user.
        const raced = uniqueViolation(error) ? await deps.users.findByEmail(organisationId, identity.email) : undefined;
        if (raced) return { user: raced, by: 'existing' };
        throw error;
      }
    },
  };
}

export type Provisioner = ReturnType<typeof createProvisioner>;
