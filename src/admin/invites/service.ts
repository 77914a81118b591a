import { generateRawKey, hashKey, keyHint, type ApiKeyVerifier } from '../../auth/api-key-service.js';
import { isOrgAdmin, keyKind, type Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { digestsEqual, randomToken, sha256Hex } from '../../lib/crypto.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { isUuid, newId } from '../../lib/ids.js';
import type {
  InviteRepository,
  InviteRow,
  InviteState,
  InviteWorkspaceRow,
} from '../../storage/repositories/invites.js';
import type { UserRepository } from '../../storage/repositories/users.js';
import type { WorkspaceRepository, WorkspaceRow } from '../../storage/repositories/workspaces.js';
import type { WorkspaceRole } from '../../storage/schema.js';
import { managesMembers, roleWithin } from '../members/roles.js';
import { pageWindow } from '../shared/pagination.js';
import { effectiveWorkspaceRole } from '../shared/workspace-access.js';
import { toUserObject } from '../users/service.js';
import type { UserObject } from '../users/schemas.js';
import { firstKeyScopes } from './first-key.js';
import { WORKSPACE_SCOPES } from '../../auth/scopes.js';
import type {
  AcceptInviteBody,
  CreateInviteBody,
  InviteObject,
  ListInvitesQuery,
  ResendInviteBody,
} from './schemas.js';

/** Prefix of invite tokens, so that a leaked one is recognised for what it is. */
export const INVITE_TOKEN_PREFIX = 'svcinv-';
const TOKEN_RE = /^svcinv-[A-Za-z0-9_-]{43}$/;
const DAY_MS = 86_400_000;

export interface IssuedInvite {
  row: InviteRow;
  /** The one-time token, in clear: only in the create and resend responses. */
  token: string;
}

/**
 * Invitations, the only way into the organisation. The token is 32 random bytes, stored as a
 * SHA-256 (like API keys) and found by that hash, so checking it leaks nothing through timing.
 * Who may invite follows the spec's rule that a manager cannot add someone with a higher
 * privilege: owners and admins invite anyone with an admin key; with a workspace key one
 * invites organisation members into that workspace only, with a role no higher than one's own
 * there (and only as a manager or admin).
 */
export function createInviteService(deps: {
  invites: InviteRepository;
  users: UserRepository;
  workspaces: WorkspaceRepository;
  verifier: ApiKeyVerifier;
  clock: Clock;
}) {
  const now = () => new Date(deps.clock.now()).toISOString();
  const expiry = (days: number) => new Date(deps.clock.now() + days * DAY_MS).toISOString();

  function newToken(): { token: string; hash: string } {
    const token = `${INVITE_TOKEN_PREFIX}${randomToken(32)}`;
    return { token, hash: sha256Hex(token) };
  }

  /** The rules on who may grant what; `param` prefixes name the offending field. */
  function assertMayGrant(
    principal: Principal,
    role: InviteRow['role'],
    grants: Array<{ workspaceId: string; role: WorkspaceRole; param: string }>,
  ): void {
    if (keyKind(principal) === 'admin') {
      if (!isOrgAdmin(principal))
        throw new AppError('ROLE_NOT_ALLOWED', 'Only organisation owners and admins invite users with an admin key.');
      return;
    }
    if (role !== 'member')
      throw new AppError(
        'ROLE_NOT_ALLOWED',
        'With a workspace key one invites organisation members only; owners and admins invite admins.',
        { param: 'role' },
      );
    for (const grant of grants) {
      if (grant.workspaceId !== principal.workspaceId)
        throw new AppError('WORKSPACE_FORBIDDEN', 'A workspace key invites into its own workspace only.', {
          param: `${grant.param}.id`,
        });
      const own = effectiveWorkspaceRole(principal, grant.workspaceId);
      if (!managesMembers(own))
        throw new AppError('ROLE_NOT_ALLOWED', 'Only workspace managers and admins invite users.');
      if (!roleWithin(grant.role, own))
        throw new AppError('ROLE_NOT_ALLOWED', `A workspace ${own} cannot grant the role ${grant.role}.`, {
          param: `${grant.param}.role`,
        });
    }
  }

  async function resolveGrants(principal: Principal, body: CreateInviteBody) {
    const grants: Array<{ workspace: WorkspaceRow; role: WorkspaceRole; param: string }> = [];
    for (const [index, entry] of (body.workspaces ?? []).entries()) {
      const param = `workspaces[${index}]`;
      const workspace = await deps.workspaces.findByIdOrSlug(principal.organisationId, entry.id);
      if (!workspace) throw new AppError('NOT_FOUND', `Workspace ${entry.id} not found.`, { param: `${param}.id` });
      if (workspace.status !== 'active') throw invalid(`${param}.id`, `Workspace ${workspace.slug} is archived.`);
      if (grants.some((grant) => grant.workspace.id === workspace.id))
        throw invalid(`${param}.id`, `Workspace ${entry.id} is listed twice.`);
      grants.push({ workspace, role: entry.role, param });
    }
    return grants;
  }

  async function assertEmailFree(organisationId: string, email: string, inviteId: string | null): Promise<void> {
    if (await deps.users.findByEmail(organisationId, email))
      throw new AppError('CONFLICT', `${email} is already a user of the organisation.`, { param: 'email' });
    const open = await deps.invites.findOpenForEmail(organisationId, email, now());
    if (open && open.id !== inviteId)
      throw new AppError('CONFLICT', `${email} already has a pending invite (${open.id}); resend or revoke it.`, {
        param: 'email',
      });
  }

  /** An invite the caller may see: a workspace key sees those that grant its workspace. */
  async function findVisible(
    principal: Principal,
    id: string,
  ): Promise<{ row: InviteRow; workspaces: InviteWorkspaceRow[] }> {
    const row = isUuid(id) ? await deps.invites.findById(principal.organisationId, id) : undefined;
    if (!row) throw notFound('Invite', 'inviteId');
    const workspaces = (await deps.invites.workspacesOf([row.id])).get(row.id) ?? [];
    if (keyKind(principal) === 'workspace' && !workspaces.some((w) => w.workspace_id === principal.workspaceId)) {
      throw new AppError('WORKSPACE_FORBIDDEN', 'This workspace key cannot reach invites into other workspaces.');
    }
    return { row, workspaces };
  }

  async function findManageable(principal: Principal, id: string) {
    const found = await findVisible(principal, id);
    assertMayGrant(
      principal,
      found.row.role,
      found.workspaces.map((w, index) => ({
        workspaceId: w.workspace_id,
        role: w.role,
        param: `workspaces[${index}]`,
      })),
    );
    return found;
  }

  return {
    async create(principal: Principal, body: CreateInviteBody): Promise<IssuedInvite> {
      const grants = await resolveGrants(principal, body);
      assertMayGrant(
        principal,
        body.role,
        grants.map((grant) => ({ workspaceId: grant.workspace.id, role: grant.role, param: grant.param })),
      );
      if (body.role === 'member' && grants.length === 0) {
        throw invalid(
          'workspaces',
          'An organisation member needs at least one workspace; the first one gets their first API key.',
        );
      }
      const email = body.email.toLowerCase();
      await assertEmailFree(principal.organisationId, email, null);
      const { token, hash } = newToken();
      const stamp = now();
      const row: InviteRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        email,
        role: body.role,
        token_hash: hash,
        status: 'pending',
        expires_at: expiry(body.expires_in_days),
        invited_by_user_id: principal.userId,
        invited_by_key_id: principal.keyId,
        accepted_at: null,
        accepted_user_id: null,
        revoked_at: null,
        created_at: stamp,
        last_updated_at: stamp,
        workspace_api_key_details: firstKeyDetails(body),
      };
      await deps.invites.insert(
        row,
        grants.map((grant, position) => ({
          invite_id: row.id,
          workspace_id: grant.workspace.id,
          role: grant.role,
          position,
        })),
      );
      return { row, token };
    },

    async list(principal: Principal, query: ListInvitesQuery) {
      const { total, rows } = await deps.invites.list({
        organisationId: principal.organisationId,
        workspaceId: keyKind(principal) === 'workspace' ? (principal.workspaceId ?? undefined) : undefined,
        state: query.status === 'cancelled' ? 'revoked' : query.status,
        email: query.email,
        role: query.role,
        now: now(),
        ...pageWindow(query),
      });
      const workspaces = await deps.invites.workspacesOf(rows.map((row) => row.id));
      return { total, data: rows.map((row) => toInviteObject(row, workspaces.get(row.id) ?? [], now())) };
    },

    async get(principal: Principal, id: string): Promise<InviteObject> {
      const { row, workspaces } = await findVisible(principal, id);
      return toInviteObject(row, workspaces, now());
    },

    /** A new token and a new expiry; the previous token stops working. Pending and expired invites only. */
    async resend(principal: Principal, id: string, body: ResendInviteBody): Promise<IssuedInvite> {
      const { row } = await findManageable(principal, id);
      if (row.status !== 'pending')
        throw new AppError('CONFLICT', `The invite is ${row.status}; create a new one instead.`, { param: 'inviteId' });
      await assertEmailFree(principal.organisationId, row.email, row.id);
      const { token, hash } = newToken();
      const patch = { token_hash: hash, expires_at: expiry(body?.expires_in_days ?? 7), last_updated_at: now() };
      if (!(await deps.invites.updatePending(row.id, patch)))
        throw new AppError('CONFLICT', 'The invite changed meanwhile (accepted or revoked).', { param: 'inviteId' });
      return { row: { ...row, ...patch }, token };
    },

    /** Revokes a pending (or expired) invite; revoking twice is harmless, an accepted invite stays accepted. */
    async revoke(principal: Principal, id: string): Promise<InviteRow> {
      const { row } = await findManageable(principal, id);
      if (row.status === 'revoked') return row;
      if (row.status === 'accepted')
        throw new AppError(
          'CONFLICT',
          'The invite was already accepted; remove the user instead (DELETE /v1/users/{userId}).',
          { param: 'inviteId' },
        );
      const stamp = now();
      if (
        !(await deps.invites.updatePending(row.id, { status: 'revoked', revoked_at: stamp, last_updated_at: stamp }))
      ) {
        throw new AppError('CONFLICT', 'The invite changed meanwhile (accepted or revoked).', { param: 'inviteId' });
      }
      return { ...row, status: 'revoked', revoked_at: stamp, last_updated_at: stamp };
    },

    /**
     * Redeems a token: creates the user with the invite's role and memberships, marks the invite
     * accepted, and issues the user's first API key (see firstKeyScopes). Public: the token is
     * the credential. Returns the new key's principal too, for the audit record.
     */
    async accept(body: AcceptInviteBody) {
      if (!TOKEN_RE.test(body.token))
        throw new AppError('INVALID_INVITE_TOKEN', 'The invite token is malformed.', { param: 'token' });
      const hash = sha256Hex(body.token);
      const row = await deps.invites.findByTokenHash(hash);
      if (!row || !digestsEqual(row.token_hash, hash))
        throw new AppError(
          'INVALID_INVITE_TOKEN',
          'The invite token is not valid (a resend replaces the previous token).',
          { param: 'token' },
        );
      assertAcceptable(row, deps.clock.now());
      if (await deps.users.findByEmail(row.organisation_id, row.email))
        throw new AppError('CONFLICT', `${row.email} is already a user of the organisation.`, { param: 'token' });

      const grants = (await deps.invites.workspacesOf([row.id])).get(row.id) ?? [];
      const active: InviteWorkspaceRow[] = [];
      for (const grant of grants)
        if ((await deps.workspaces.findById(grant.workspace_id))?.status === 'active') active.push(grant);
      const home = active[0] ?? null;
      if (row.role === 'member' && !home)
        throw invalid('token', 'Every workspace of this invite has been archived; ask for a new invite.');

      const details = row.workspace_api_key_details
        ? (JSON.parse(row.workspace_api_key_details) as { scopes: string[]; name?: string })
        : null;
      const stamp = now();
      const userId = newId();
      const raw = generateRawKey();
      const keyId = newId();
      const user = {
        id: userId,
        organisation_id: row.organisation_id,
        email: row.email,
        first_name: body.first_name ?? null,
        last_name: body.last_name ?? null,
        role: row.role,
        created_at: stamp,
        last_updated_at: stamp,
      };
      const accepted = await deps.invites.accept({
        inviteId: row.id,
        now: stamp,
        user,
        memberships: grants.map((grant) => ({ workspaceId: grant.workspace_id, role: grant.role })),
        key: {
          id: keyId,
          organisation_id: row.organisation_id,
          workspace_id: row.role === 'admin' ? null : home!.workspace_id,
          user_id: userId,
          type: row.role === 'admin' ? 'organisation-service' : 'workspace-user',
          name: details?.name ?? `First key of ${row.email}`,
          description: 'Issued when the invite was accepted.',
          key_hash: hashKey(raw),
          key_hint: keyHint(raw),
          scopes: JSON.stringify(details?.scopes ?? firstKeyScopes(row.role, home?.role ?? null)),
          status: 'active',
          expires_at: null,
          creation_mode: 'auto',
          created_by_key_id: null,
          created_at: stamp,
          last_updated_at: stamp,
          rate_limits: null,
          usage_limits: null,
        },
      });
      if (!accepted) {
        const current = await deps.invites.findById(row.organisation_id, row.id);
        assertAcceptable(current ?? row, deps.clock.now());
        throw new AppError('INVITE_ALREADY_ACCEPTED', 'The invite was already accepted.', { param: 'token' });
      }
      const verified = await deps.verifier.verify(raw);
      const userObject: UserObject = toUserObject(
        user,
        grants.map((grant) => grant.workspace_id),
      );
      return {
        inviteId: row.id,
        user: userObject,
        apiKey: raw,
        apiKeyId: keyId,
        principal: verified.ok ? verified.principal : null,
      };
    },
  };
}

export type InviteService = ReturnType<typeof createInviteService>;

function assertAcceptable(row: InviteRow, now: number): void {
  if (row.status === 'accepted')
    throw new AppError('INVITE_ALREADY_ACCEPTED', 'The invite was already accepted; its token works once.', {
      param: 'token',
    });
  if (row.status === 'revoked') throw new AppError('INVITE_REVOKED', 'The invite was cancelled.', { param: 'token' });
  if (Date.parse(row.expires_at) <= now)
    throw new AppError('INVITE_EXPIRED', `The invite expired at ${row.expires_at}; ask for it to be resent.`, {
      param: 'token',
    });
}

export function inviteState(row: InviteRow, nowIso: string): InviteState {
  return row.status === 'pending' && row.expires_at <= nowIso ? 'expired' : row.status;
}

/** The state as answered: a revoked invite is `cancelled`, the reference's word. */
const publicState = (state: InviteState): InviteObject['status'] => (state === 'revoked' ? 'cancelled' : state);

/**
 * `workspace_api_key_details` as stored: only for an invite whose first key is a workspace key
 * (a member's), with workspace scopes only.
 */
function firstKeyDetails(body: CreateInviteBody): string | null {
  const details = body.workspace_api_key_details;
  if (!details) return null;
  if (body.role !== 'member')
    throw invalid(
      'workspace_api_key_details',
      "An organisation admin's first key is an admin key with every scope; workspace_api_key_details applies to members' first workspace key.",
    );
  details.scopes.forEach((scope, index) => {
    if (!WORKSPACE_SCOPES.includes(scope))
      throw invalid(
        `workspace_api_key_details.scopes[${index}]`,
        `${scope} is not a workspace scope (docs/scopes.md lists them).`,
      );
  });
  return JSON.stringify(details);
}

export function toInviteObject(row: InviteRow, workspaces: InviteWorkspaceRow[], nowIso: string): InviteObject {
  return {
    object: 'invite',
    id: row.id,
    email: row.email,
    role: row.role,
    workspaces: workspaces.map((w) => ({ workspace_id: w.workspace_id, role: w.role })),
    status: publicState(inviteState(row, nowIso)),
    invited_by: row.invited_by_user_id,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    expires_at: row.expires_at,
    accepted_at: row.accepted_at,
    cancelled_at: row.revoked_at,
  };
}
