import { describe, expect, it } from 'vitest';
import { createSecuritySettings } from '../../src/admin/settings/security-settings.js';
import { DEFAULT_SECURITY_SETTINGS } from '../../src/admin/settings/schemas.js';
import type { Principal } from '../../src/auth/principal.js';
import { ALL_SCOPES } from '../../src/auth/scopes.js';
import { systemClock } from '../../src/lib/clock.js';
import { AppError } from '../../src/lib/errors.js';
import { addUser, createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { apiClient, type ApiClient } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

const DAY_MS = 24 * 3600 * 1000;

/** An admin key whose user is an organisation member: made by the owner, then handed over in the database. */
async function memberAdminKey(t: TestServer, admin: ApiClient): Promise<ApiClient> {
  const userId = await addUser(t.server.db, t.server.bootstrap.organisationId, 'member');
  const created = await admin.post('/v1/api-keys/organisation/service', { name: 'handed over', scopes: ALL_SCOPES });
  expect(created.status).toBe(200);
  await t.server.db.updateTable('api_keys').set({ user_id: userId }).where('id', '=', created.body.id).execute();
  return apiClient(t.baseUrl, created.body.key);
}

describe('security settings: organisation level', () => {
  it('starts from the documented defaults, changes only the keys given, and names unknown keys and wrong types', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const initial = await admin.get('/v1/settings/security');
    expect(initial.status).toBe(200);
    expect(initial.body).toMatchObject({
      object: 'security_settings',
      scope: 'organisation',
      organisation_id: t.server.bootstrap.organisationId,
      last_updated_at: null,
    });
    expect(initial.body.settings).toEqual(DEFAULT_SECURITY_SETTINGS);
    expect(initial.body.settings).toMatchObject({
      membersViewPrompts: true,
      membersWritePrompts: false,
      managersWritePrompts: true,
      membersWriteConfigs: false,
      managersWriteConfigs: true,
    });

    const unknown = await admin.put('/v1/settings/security', { membersViewAllData: false, membersSeeEverything: true });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'membersSeeEverything' });
    expect(unknown.body.error.message).toContain('membersSeeEverything');

    const wrongType = await admin.put('/v1/settings/security', { managersViewAnalytics: 'no' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.param).toBe('managersViewAnalytics');
    for (const body of [
      { maxUserApiKeysPerWorkspace: -1 },
      { maxUserApiKeysPerWorkspace: 1.5 },
      { userApiKeyMaxExpiryDays: 0 },
      { membersViewAllData: null },
    ]) {
      const res = await admin.put('/v1/settings/security', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.param).toBe(Object.keys(body)[0]);
    }
    const order = await admin.put('/v1/settings/security', {
      userApiKeyDefaultExpiryDays: 30,
      userApiKeyMaxExpiryDays: 10,
    });
    expect(order.status).toBe(400);
    expect(order.body.error.param).toBe('userApiKeyDefaultExpiryDays');
    // Nothing was stored by the refused requests.
    expect((await admin.get('/v1/settings/security')).body.settings).toEqual(DEFAULT_SECURITY_SETTINGS);

    const changed = await admin.put('/v1/settings/security', {
      membersViewAnalytics: false,
      maxUserApiKeysPerWorkspace: 3,
    });
    expect(changed.status).toBe(200);
    expect(changed.body.settings).toEqual({
      ...DEFAULT_SECURITY_SETTINGS,
      membersViewAnalytics: false,
      maxUserApiKeysPerWorkspace: 3,
    });
    expect(Date.parse(changed.body.last_updated_at)).not.toBeNaN();
    await admin.put('/v1/settings/security', { maxUserApiKeysPerWorkspace: null });
    expect((await admin.get('/v1/settings/security')).body.settings).toEqual({
      ...DEFAULT_SECURITY_SETTINGS,
      membersViewAnalytics: false,
    });

    const audit = await admin.get('/v1/audit-logs?resource_type=security_settings');
    expect(audit.body.data.map((r: any) => r.response_status_code).sort()).toEqual([
      200, 200, 400, 400, 400, 400, 400, 400, 400,
    ]);
  });

  it('is read with organisations.read on admin keys, and changed only by owners and admins', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const reader = await admin.post('/v1/api-keys/organisation/service', {
      name: 'reader',
      scopes: ['organisations.read'],
    });
    expect((await apiClient(t.baseUrl, reader.body.key).get('/v1/settings/security')).status).toBe(200);
    const refused = await apiClient(t.baseUrl, reader.body.key).put('/v1/settings/security', {
      membersViewAllData: false,
    });
    expect(refused.body.error.code).toBe('MISSING_SCOPE');

    const workspaceKey = await createWorkspaceKey(admin, { workspace_id: 'default', scopes: ['workspaces.read'] });
    expect((await apiClient(t.baseUrl, workspaceKey.key).get('/v1/settings/security')).body.error.code).toBe(
      'KEY_TYPE_NOT_ALLOWED',
    );

    const member = await memberAdminKey(t, admin);
    expect((await member.get('/v1/settings/security')).status).toBe(200);
    const byMember = await member.put('/v1/settings/security', { membersViewAllData: false });
    expect(byMember.status).toBe(403);
    expect(byMember.body.error.code).toBe('ROLE_NOT_ALLOWED');
    expect(
      (await member.put('/v1/workspaces/default/settings/security', { data_visibility: null })).body.error.code,
    ).toBe('ROLE_NOT_ALLOWED');
  });
});

describe('security settings: workspace overrides', () => {
  it('overrides by category, null removes an override, and the effective settings combine both levels', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const team = await createWorkspace(admin, 'Team', 'team');
    await admin.put('/v1/settings/security', {
      membersViewAllData: false,
      maxUserApiKeysPerWorkspace: 2,
      userApiKeyMaxExpiryDays: 90,
    });

    const fresh = await admin.get('/v1/workspaces/team/settings/security');
    expect(fresh.status).toBe(200);
    expect(fresh.body).toMatchObject({
      scope: 'workspace',
      workspace_id: team.id,
      overrides: {},
      last_updated_at: null,
    });
    expect(fresh.body.settings).toMatchObject({ membersViewAllData: false, maxUserApiKeysPerWorkspace: 2 });

    for (const [body, param] of [
      [{ bogus: {} }, 'bogus'],
      [{ data_visibility: { membersViewAnalytics: false } }, 'data_visibility.membersViewAnalytics'],
      [{ data_visibility: { membersViewAllData: 'yes' } }, 'data_visibility.membersViewAllData'],
      [{ membersViewAllData: true }, 'membersViewAllData'],
      [{ user_api_keys: { userApiKeyDefaultExpiryDays: 120 } }, 'userApiKeyDefaultExpiryDays'],
    ] as const) {
      const res = await admin.put('/v1/workspaces/team/settings/security', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.param).toBe(param);
    }

    const put = await admin.put(`/v1/workspaces/${team.id}/settings/security`, {
      data_visibility: { membersViewAllData: true },
      user_api_keys: { maxUserApiKeysPerWorkspace: null },
      prompts: { membersWritePrompts: true },
    });
    expect(put.status).toBe(200);
    expect(put.body.overrides).toEqual({
      data_visibility: { membersViewAllData: true },
      user_api_keys: { maxUserApiKeysPerWorkspace: null },
      prompts: { membersWritePrompts: true },
    });
    expect(put.body.settings).toMatchObject({
      membersViewAllData: true,
      managersViewAllData: true,
      maxUserApiKeysPerWorkspace: null,
      userApiKeyMaxExpiryDays: 90,
      membersWritePrompts: true,
    });
    // The organisation and other workspaces keep their values.
    expect((await admin.get('/v1/settings/security')).body.settings).toMatchObject({
      membersViewAllData: false,
      maxUserApiKeysPerWorkspace: 2,
    });
    expect((await admin.get('/v1/workspaces/default/settings/security')).body.settings).toMatchObject({
      membersViewAllData: false,
      maxUserApiKeysPerWorkspace: 2,
    });

    // A category given replaces its override; null removes one; categories left out stay.
    const second = await admin.put('/v1/workspaces/team/settings/security', {
      data_visibility: { managersViewAllData: false },
      prompts: null,
    });
    expect(second.body.overrides).toEqual({
      data_visibility: { managersViewAllData: false },
      user_api_keys: { maxUserApiKeysPerWorkspace: null },
    });
    expect(second.body.settings).toMatchObject({
      membersViewAllData: false,
      managersViewAllData: false,
      membersWritePrompts: false,
    });

    // A workspace key reads the settings of its own workspace only.
    const teamKey = await createWorkspaceKey(admin, { workspace_id: 'team', scopes: ['workspaces.read'] });
    const own = await apiClient(t.baseUrl, teamKey.key).get('/v1/workspaces/team/settings/security');
    expect(own.status).toBe(200);
    expect(own.body.settings.managersViewAllData).toBe(false);
    expect(
      (await apiClient(t.baseUrl, teamKey.key).get('/v1/workspaces/default/settings/security')).body.error.code,
    ).toBe('WORKSPACE_FORBIDDEN');
    expect((await admin.get('/v1/workspaces/nope/settings/security')).status).toBe(404);
  });
});

describe('data visibility of request logs', () => {
  it('limits members to the logs of their own keys while membersViewAllData is false, and shows all again when true', async () => {
    const g = await startGateway();
    const { organisationId, workspaceId } = g.server.bootstrap;
    const scopes = ['completions.write', 'logs.list', 'logs.view'];
    const people = {
      ann: await addUser(g.server.db, organisationId, 'member', [{ workspaceId, role: 'member' }]),
      bob: await addUser(g.server.db, organisationId, 'member', [{ workspaceId, role: 'member' }]),
      max: await addUser(g.server.db, organisationId, 'member', [{ workspaceId, role: 'manager' }]),
    };
    const keys = {
      ann: await createWorkspaceKey(g.admin, { workspace_id: 'default', user_id: people.ann, scopes }),
      bob: await createWorkspaceKey(g.admin, { workspace_id: 'default', user_id: people.bob, scopes }),
      max: await createWorkspaceKey(g.admin, { workspace_id: 'default', user_id: people.max, scopes }),
    };
    const client = (who: keyof typeof keys) => apiClient(g.baseUrl, keys[who].key);
    const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
    for (const who of ['ann', 'bob', 'bob', 'max'] as const)
      expect((await client(who).post('/v1/chat/completions', chat, g.viaMock)).status).toBe(200);
    expect((await g.admin.post('/v1/chat/completions', chat, g.viaMock)).status).toBe(200);
    const all = await g.logs(5);
    const logOf = (who: keyof typeof keys) => all.find((log: any) => log.api_key_id === keys[who].id).id as string;
    const visible = async (who: keyof typeof keys) =>
      (await client(who).get('/v1/logs')).body.data.map((log: any) => log.api_key_id);

    expect(await visible('ann')).toHaveLength(5);

    expect((await g.admin.put('/v1/settings/security', { membersViewAllData: false })).status).toBe(200);
    expect(await visible('ann')).toEqual([keys.ann.id]);
    const bobs = await client('bob').get('/v1/logs');
    expect(bobs.body).toMatchObject({ total: 2 });
    expect(bobs.body.data.map((log: any) => log.api_key_id)).toEqual([keys.bob.id, keys.bob.id]);
    // Filters still apply within what the member sees; another key's id finds nothing.
    expect((await client('ann').get(`/v1/logs?api_key_id=${keys.bob.id}`)).body.total).toBe(0);
    expect((await client('ann').get(`/v1/logs/${logOf('ann')}`)).status).toBe(200);
    const other = await client('ann').get(`/v1/logs/${logOf('bob')}`);
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('NOT_FOUND');
    // Managers follow managersViewAllData (still true); owners and admins are never limited.
    expect(await visible('max')).toHaveLength(5);
    expect((await g.admin.get('/v1/logs')).body.total).toBe(5);

    await g.admin.put('/v1/settings/security', { managersViewAllData: false });
    expect(await visible('max')).toEqual([keys.max.id]);

    // A workspace override lifts it for this workspace; removing the override restores the organisation's value.
    await g.admin.put('/v1/workspaces/default/settings/security', { data_visibility: { membersViewAllData: true } });
    expect(await visible('ann')).toHaveLength(5);
    expect(await visible('max')).toEqual([keys.max.id]);
    await g.admin.put('/v1/workspaces/default/settings/security', { data_visibility: null });
    expect(await visible('ann')).toEqual([keys.ann.id]);

    await g.admin.put('/v1/settings/security', { membersViewAllData: true, managersViewAllData: true });
    expect(await visible('ann')).toHaveLength(5);
    expect((await client('ann').get(`/v1/logs/${logOf('bob')}`)).status).toBe(200);
  });
});

describe('user API key policy and access helpers', () => {
  it('checkUserKeyPolicy caps active user keys per workspace and applies the default and maximum expiry', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const { organisationId, workspaceId } = t.server.bootstrap;
    const settings = createSecuritySettings({ db: t.server.db, clock: systemClock });
    const ann = await addUser(t.server.db, organisationId, 'member', [{ workspaceId, role: 'member' }]);
    const check = (userId: string | null, expiresAt?: string | null) =>
      settings.checkUserKeyPolicy({ organisationId, workspaceId, userId, expiresAt });

    // Nothing set: no cap, no expiry given back.
    expect(await check(ann)).toEqual({ expiresAt: null });

    await admin.put('/v1/settings/security', {
      maxUserApiKeysPerWorkspace: 2,
      userApiKeyDefaultExpiryDays: 30,
      userApiKeyMaxExpiryDays: 90,
    });
    settings.invalidate();
    const first = await createWorkspaceKey(admin, {
      workspace_id: 'default',
      user_id: ann,
      scopes: ['completions.write'],
    });
    await createWorkspaceKey(admin, { workspace_id: 'default', user_id: ann, scopes: ['completions.write'] });
    const capped = await check(ann).then(
      () => null,
      (error: unknown) => error,
    );
    expect(capped).toBeInstanceOf(AppError);
    expect(capped).toMatchObject({ code: 'USER_KEY_LIMIT_REACHED', status: 409 });
    // Revoked keys do not count; service keys and keys of other users do not either.
    await admin.delete(`/v1/api-keys/${first.id}`);
    const { expiresAt } = await check(ann);
    expect(Date.parse(expiresAt!) - Date.now()).toBeGreaterThan(30 * DAY_MS - 60_000);
    expect(Date.parse(expiresAt!) - Date.now()).toBeLessThanOrEqual(30 * DAY_MS);
    expect(await check(null, null)).toMatchObject({ expiresAt: expect.any(String) });

    const soon = new Date(Date.now() + 10 * DAY_MS).toISOString();
    expect(await check(ann, soon)).toEqual({ expiresAt: soon });
    const tooLate = await check(ann, new Date(Date.now() + 100 * DAY_MS).toISOString()).then(
      () => null,
      (error: unknown) => error,
    );
    expect(tooLate).toMatchObject({ code: 'INVALID_REQUEST', param: 'expires_at', status: 400 });

    // Without a default, the maximum is the expiry of a key created without one; a workspace override wins.
    await admin.put('/v1/settings/security', { userApiKeyDefaultExpiryDays: null });
    await admin.put('/v1/workspaces/default/settings/security', {
      user_api_keys: { maxUserApiKeysPerWorkspace: null },
    });
    settings.invalidate();
    const byMax = await check(ann);
    expect(Math.round((Date.parse(byMax.expiresAt!) - Date.now()) / DAY_MS)).toBe(90);
    await createWorkspaceKey(admin, { workspace_id: 'default', user_id: ann, scopes: ['completions.write'] });
    await expect(check(ann)).resolves.toBeDefined();
  });

  it('canView and canWrite follow the effective settings for members and managers; owners and admins always may', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const { organisationId, workspaceId } = t.server.bootstrap;
    const settings = createSecuritySettings({ db: t.server.db, clock: systemClock });
    const principal = (orgRole: Principal['orgRole'], workspaceRole: Principal['workspaceRole']): Principal => ({
      keyId: 'k',
      keyType: 'workspace-user',
      organisationId,
      workspaceId,
      userId: 'u',
      orgRole,
      workspaceRole,
      scopes: new Set(),
      rateLimits: null,
      usageLimits: null,
      keyCreatedAt: '',
      keyName: 'k',
      defaults: null,
    });
    const member = principal('member', 'member');
    const manager = principal('member', 'manager');
    const owner = principal('owner', 'member');

    expect(await settings.canView(member, 'prompts')).toBe(true);
    expect(await settings.canWrite(member, 'prompts')).toBe(false);
    expect(await settings.canWrite(member, 'configs')).toBe(false);
    expect(await settings.canWrite(manager, 'prompts')).toBe(true);
    expect(await settings.canWrite(manager, 'configs')).toBe(true);
    expect(await settings.canView(member, 'analytics')).toBe(true);

    await admin.put('/v1/settings/security', {
      membersViewAnalytics: false,
      managersViewPrompts: false,
      membersWriteConfigs: true,
    });
    settings.invalidate();
    expect(await settings.canView(member, 'analytics')).toBe(false);
    expect(await settings.canView(manager, 'analytics')).toBe(true);
    // Writing needs seeing too.
    expect(await settings.canWrite(manager, 'prompts')).toBe(false);
    expect(await settings.canWrite(member, 'configs')).toBe(true);
    expect(await settings.canView(owner, 'analytics')).toBe(true);
    expect(await settings.canWrite(owner, 'prompts')).toBe(true);
    expect(await settings.canView(principal('member', 'admin'), 'analytics')).toBe(true);
  });
});

describe('user API key policy from the security settings', () => {
  it('caps user keys per workspace and applies the default and maximum expiry on creation', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const set = await admin.put('/v1/settings/security', {
      maxUserApiKeysPerWorkspace: 1,
      userApiKeyDefaultExpiryDays: 7,
      userApiKeyMaxExpiryDays: 30,
    });
    expect(set.status).toBe(200);
    const first = await admin.post('/v1/api-keys/workspace/user', {
      name: 'one',
      workspace_id: 'default',
      scopes: ['completions.write'],
    });
    expect(first.status).toBe(200);
    const shown = await admin.get(`/v1/api-keys/${first.body.id}`);
    const days = (Date.parse(shown.body.expires_at) - Date.parse(shown.body.created_at)) / 86_400_000;
    expect(Math.round(days)).toBe(7);
    const second = await admin.post('/v1/api-keys/workspace/user', {
      name: 'two',
      workspace_id: 'default',
      scopes: ['completions.write'],
    });
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('USER_KEY_LIMIT_REACHED');
    // Service keys are not user keys: the cap does not apply to them.
    expect(
      (
        await admin.post('/v1/api-keys/workspace/service', {
          name: 'svc',
          workspace_id: 'default',
          scopes: ['completions.write'],
        })
      ).status,
    ).toBe(200);
    await admin.delete(`/v1/api-keys/${first.body.id}`);
    const tooLong = await admin.post('/v1/api-keys/workspace/user', {
      name: 'long',
      workspace_id: 'default',
      scopes: ['completions.write'],
      expires_at: new Date(Date.now() + 90 * 86_400_000).toISOString(),
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.param).toBe('expires_at');
  });
});
