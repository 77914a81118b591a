import type { JWTPayload, ProtectedHeaderParameters } from 'jose';
import type { Clock } from '../../lib/clock.js';
import { isUuid } from '../../lib/ids.js';
import type { JwtSettingsRepository } from '../../storage/repositories/jwt-settings.js';
import type { UserRow } from '../../storage/repositories/users.js';
import type { WorkspaceRow } from '../../storage/repositories/workspaces.js';
import type { WorkspaceRole } from '../../storage/schema.js';
import type { Principal } from '../principal.js';
import { jwtCallerId } from './caller-id.js';
import { isClaimProblem, readIdentity, type TokenIdentity } from './claims.js';
import { describeVerifyError, quote, type JwtFailure, type JwtFailureReason } from './failures.js';
import type { JwksCache } from './jwks-cache.js';
import { jose } from './jose.js';
import { parseStoredSettings, type JwtSettings } from './settings.js';

export type JwtResult = { ok: true; principal: Principal } | JwtFailure;

/** The lookups the authenticator needs, narrowed to what it reads. */
export interface JwtDirectory {
  settings: Pick<JwtSettingsRepository, 'findByIssuer' | 'find' | 'soleOrganisationId'>;
  findWorkspace(organisationId: string, idOrSlug: string): Promise<WorkspaceRow | undefined>;
  findUserById(organisationId: string, id: string): Promise<UserRow | undefined>;
  findUserByEmail(organisationId: string, email: string): Promise<UserRow | undefined>;
  findMemberRole(workspaceId: string, userId: string): Promise<WorkspaceRole | null>;
}

interface Context {
  workspace: WorkspaceRow | undefined;
  user: UserRow | undefined;
  memberRole: WorkspaceRole | null;
}

interface Cached<T> {
  loadedAt: number;
  value: T;
}

const MAX_CACHED = 10_000;

/**
 * Turns a JWT into a principal: finds the organisation by the token's issuer, verifies the
 * signature against its JWKS (cached, fetched again on an unknown `kid`), `exp`/`nbf` with the
 * configured clock tolerance, issuer and audience; then reads user, workspace and scopes
 * through the configured claim names. Settings, workspaces and users are kept in memory for
 * `cacheTtlMs` (like verified API keys), and `invalidate` drops them at once.
 */
export function createJwtAuthenticator(deps: {
  directory: JwtDirectory;
  jwks: JwksCache;
  clock: Clock;
  cacheTtlMs: number;
}) {
  const byIssuer = new Map<string, Cached<{ organisationId: string; settings: JwtSettings } | null>>();
  const contexts = new Map<string, Cached<Context>>();

  async function cached<T>(map: Map<string, Cached<T>>, key: string, load: () => Promise<T>): Promise<T> {
    const now = deps.clock.now();
    const hit = map.get(key);
    if (hit && now - hit.loadedAt < deps.cacheTtlMs) return hit.value;
    const value = await load();
    if (map.size >= MAX_CACHED) map.clear();
    map.set(key, { loadedAt: now, value });
    return value;
  }

  const settingsFor = (issuer: string) =>
    cached(byIssuer, issuer, async () => {
      const row = await deps.directory.settings.findByIssuer(issuer);
      return row
        ? { organisationId: row.organisation_id, settings: parseStoredSettings(row.issuer, row.settings) }
        : null;
    });

  const contextFor = (organisationId: string, identity: TokenIdentity) =>
    cached(
      contexts,
      JSON.stringify([organisationId, identity.workspace, identity.subject, identity.email]),
      async () => {
        const workspace = await deps.directory.findWorkspace(organisationId, identity.workspace);
        // The user claim may hold an svcgw user id; otherwise the e-mail claim finds the user.
        const user =
          (isUuid(identity.subject)
            ? await deps.directory.findUserById(organisationId, identity.subject)
            : undefined) ??
          (identity.email ? await deps.directory.findUserByEmail(organisationId, identity.email) : undefined);
        const memberRole = workspace && user ? await deps.directory.findMemberRole(workspace.id, user.id) : null;
        return { workspace, user, memberRole };
      },
    );

  /** A token no organisation's settings claim: attributed to the server's only organisation, if it has one. */
  async function unclaimed(issuer: string | undefined): Promise<JwtFailure> {
    const organisationId = await deps.directory.settings.soleOrganisationId();
    const configured = organisationId !== null && (await deps.directory.settings.find(organisationId)) !== undefined;
    return configured
      ? failure(
          'unknown_issuer',
          `The token's issuer ${quote(issuer ?? null)} is not the one JWT authentication accepts.`,
          {
            organisationId,
          },
        )
      : failure(
          'not_configured',
          'JWT authentication is not configured: an organisation owner or admin sets it up with PUT /v1/settings/jwt.',
          { organisationId },
        );
  }

  async function authenticate(token: string): Promise<JwtResult> {
    const { decodeJwt, decodeProtectedHeader, jwtVerify } = jose.loaded() ?? (await jose());
    let header: ProtectedHeaderParameters;
    let unverified: JWTPayload;
    try {
      header = decodeProtectedHeader(token);
      unverified = decodeJwt(token);
    } catch (error) {
      return unclaimedMalformed(error);
    }
    if (typeof unverified.iss !== 'string') return unclaimed(undefined);
    const found = await settingsFor(unverified.iss);
    if (!found) return unclaimed(unverified.iss);
    const { organisationId, settings } = found;
    const where = { organisationId };
    if (!settings.enabled) return failure('disabled', 'JWT authentication is turned off for this organisation.', where);

    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, deps.jwks.keysFor(settings.jwks_url, settings.jwks_cache_seconds * 1000), {
        issuer: settings.issuer,
        ...(settings.audience ? { audience: settings.audience } : {}),
        algorithms: settings.algorithms,
        clockTolerance: settings.clock_tolerance_seconds,
        currentDate: new Date(deps.clock.now()),
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      const described = describeVerifyError(error, header, settings);
      if (!described) throw error;
      return failure(described.reason, described.message, where);
    }

    const identity = readIdentity(payload, settings.claims);
    if (isClaimProblem(identity)) return failure(identity.reason, identity.message, where);
    const keyId = jwtCallerId(organisationId, settings.issuer, identity.subject);
    const signed = { organisationId, keyId };
    if (identity.organisation !== null && identity.organisation !== organisationId)
      return failure(
        'wrong_organisation',
        `The token names organisation ${quote(identity.organisation)}; its issuer belongs to another.`,
        signed,
      );

    const { workspace, user, memberRole } = await contextFor(organisationId, identity);
    if (!workspace)
      return failure(
        'unknown_workspace',
        `The token's workspace ${quote(identity.workspace)} is not a workspace of this organisation.`,
        signed,
      );
    const inWorkspace = { ...signed, workspaceId: workspace.id, userId: user?.id ?? null };
    if (workspace.status === 'archived')
      return failure('workspace_archived', `The token's workspace ${quote(workspace.slug)} is archived.`, inWorkspace);
    if (!user && settings.require_known_user)
      return failure(
        'unknown_user',
        `No user of this organisation matches the token (user ${quote(identity.subject)}${identity.email ? `, e-mail ${quote(identity.email)}` : ''}).`,
        inWorkspace,
      );
    // Deprovisioned by the identity provider (SCIM `active: false`): its tokens stop with its keys.
    if (user?.deactivated_at)
      return failure('user_deactivated', `User ${quote(user.email)} is deactivated.`, inWorkspace);
    if (user && memberRole === null && user.role !== 'owner' && user.role !== 'admin')
      return failure(
        'not_a_member',
        `User ${quote(user.email)} is not a member of workspace ${quote(workspace.slug)}.`,
        inWorkspace,
      );

    const principal: Principal = Object.freeze({
      authMethod: 'jwt',
      keyId,
      keyType: user ? 'workspace-user' : 'workspace-service',
      organisationId,
      workspaceId: workspace.id,
      userId: user?.id ?? null,
      orgRole: user?.role ?? null,
      workspaceRole: memberRole,
      scopes: identity.scopes,
      rateLimits: null,
      usageLimits: null,
      keyCreatedAt: new Date(typeof payload.iat === 'number' ? payload.iat * 1000 : deps.clock.now()).toISOString(),
      keyName: `JWT ${identity.email ?? identity.subject}`.slice(0, 255),
      defaults: null,
      workspaceAllowedModels: workspace.allowed_models
        ? (JSON.parse(workspace.allowed_models) as readonly string[])
        : null,
      userLabel: identity.email ?? user?.email ?? identity.subject,
    });
    return { ok: true, principal };
  }

  async function unclaimedMalformed(error: unknown): Promise<JwtFailure> {
    const organisationId = await deps.directory.settings.soleOrganisationId();
    return failure('malformed', `The token is not a valid JWT: ${(error as Error).message}.`, { organisationId });
  }

  return {
    authenticate,
    /**
     * Forgets settings, workspaces and users (after a change to any of them). Key sets stay:
     * they are kept by URL, so new settings with a new URL fetch theirs.
     */
    invalidate(): void {
      byIssuer.clear();
      contexts.clear();
    },
  };
}

export type JwtAuthenticator = ReturnType<typeof createJwtAuthenticator>;

function failure(
  reason: JwtFailureReason,
  message: string,
  where: { organisationId: string | null; workspaceId?: string; keyId?: string; userId?: string | null },
): JwtFailure {
  return {
    ok: false,
    reason,
    message,
    organisationId: where.organisationId,
    workspaceId: where.workspaceId ?? null,
    keyId: where.keyId ?? null,
    userId: where.userId ?? null,
  };
}
