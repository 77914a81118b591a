import { generateSessionToken, hashSessionToken } from '../../src/auth/sessions/session-token.js';
import { newId } from '../../src/lib/ids.js';
import type { Db } from '../../src/storage/database.js';
import type { OrgRole, WorkspaceRole } from '../../src/storage/schema.js';
import type { ApiClient } from './http.js';

/**
 * Adds a user straight to the database: the users and invites API arrives with "Identity and
 * access"; until then tests make people this way and give them keys through the real API.
 */
export async function addUser(
  db: Db,
  organisationId: string,
  role: OrgRole,
  memberships: Array<{ workspaceId: string; role: WorkspaceRole }> = [],
): Promise<string> {
  const id = newId();
  const now = new Date().toISOString();
  await db
    .insertInto('users')
    .values({
      id,
      organisation_id: organisationId,
      email: `${id}@example.test`,
      first_name: null,
      last_name: null,
      role,
      created_at: now,
      last_updated_at: now,
    })
    .execute();
  for (const m of memberships) {
    await db
      .insertInto('workspace_members')
      .values({ workspace_id: m.workspaceId, user_id: id, role: m.role, created_at: now })
      .execute();
  }
  return id;
}

/**
 * A single sign-on session straight in the database (lasting a day from `createdAt`), for tests
 * of what sessions may do; the sign-in itself is tested with real identity providers
 * (sso-oidc.test.ts, sso-saml.test.ts). Returns the token.
 */
export async function addSession(
  db: Db,
  organisationId: string,
  userId: string,
  options: { createdAt: number; workspaceId?: string },
): Promise<string> {
  const token = generateSessionToken();
  await db
    .insertInto('sessions')
    .values({
      id: newId(),
      organisation_id: organisationId,
      user_id: userId,
      token_hash: hashSessionToken(token),
      workspace_id: options.workspaceId ?? null,
      identity_provider: 'oidc',
      subject: userId,
      client: 'test',
      client_ip: null,
      created_at: new Date(options.createdAt).toISOString(),
      expires_at: new Date(options.createdAt + 86_400_000).toISOString(),
      last_used_at: null,
      revoked_at: null,
      end_reason: null,
    })
    .execute();
  return token;
}

export async function createWorkspace(
  admin: ApiClient,
  name: string,
  slug?: string,
): Promise<{ id: string; slug: string }> {
  const res = await admin.post('/v1/workspaces', { name, ...(slug ? { slug } : {}) });
  if (res.status !== 200) throw new Error(`workspace create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function createWorkspaceKey(
  admin: ApiClient,
  body: { workspace_id: string; scopes: string[]; user_id?: string; name?: string },
): Promise<{ id: string; key: string }> {
  const res = await admin.post('/v1/api-keys/workspace/user', { name: body.name ?? 'test key', ...body });
  if (res.status !== 200) throw new Error(`key create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export const validPolicy = (overrides: Record<string, unknown> = {}) => ({
  conditions: [{ key: 'workspace_id', value: 'default' }],
  group_by: [{ key: 'api_key' }],
  type: 'requests',
  unit: 'rpm',
  value: 100,
  ...overrides,
});
