import { describe, expect, it } from 'vitest';
import { startGateway } from '../helpers/gateway.js';
import { apiClient } from '../helpers/http.js';

const chat = () => ({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });

type Gateway = Awaited<ReturnType<typeof startGateway>>;

async function serviceKey(g: Gateway, workspace: string, extra: Record<string, unknown> = {}) {
  const res = await g.admin.post('/v1/api-keys/workspace/service', {
    name: 'service key',
    workspace_id: workspace,
    scopes: ['completions.write'],
    ...extra,
  });
  expect(res.status).toBe(200);
  return { id: res.body.id as string, client: apiClient(g.baseUrl, res.body.key as string) };
}

describe('the reference fields of workspaces, API keys, invites and policies', () => {
  it('workspaces take defaults.metadata, users, rate_limits and usage_limits as arrays, and enforce them', async () => {
    const g = await startGateway();
    const invited = await g.admin.post('/v1/invites', {
      email: 'mia@example.test',
      role: 'member',
      workspaces: [{ id: 'default', role: 'member' }],
    });
    const mia = await apiClient(g.baseUrl).post('/v1/invites/accept', { token: invited.body.token });
    expect(mia.status).toBe(200);

    const created = await g.admin.post('/v1/admin/workspaces', {
      name: 'Research Lab',
      defaults: { metadata: { team: 'research' } },
      users: ['MIA@example.test'],
      rate_limits: [{ type: 'requests', unit: 'rpm', value: 2 }],
      usage_limits: [{ credit_limit: 50, type: 'cost' }],
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      defaults: { metadata: { team: 'research' } },
      rate_limits: [{ type: 'requests', unit: 'rpm', value: 2 }],
      usage_limits: [{ credit_limit: 50, type: 'cost' }],
    });
    const read = await g.admin.get(`/v1/admin/workspaces/${created.body.id}`);
    expect(read.body.users.map((u: { email: string; role: string }) => [u.email, u.role])).toEqual([
      ['mia@example.test', 'member'],
    ]);

    // Filters by name.
    const names = async (query: string) =>
      (await g.admin.get(`/v1/admin/workspaces?${query}`)).body.data.map((w: { name: string }) => w.name);
    expect(await names('name=lab')).toEqual(['Research Lab']);
    expect(await names('exact_name=Research%20Lab')).toEqual(['Research Lab']);
    expect(await names('exact_name=research%20lab')).toEqual([]);

    // The workspace's rate limit counts all its keys together; its metadata goes on their requests.
    const one = await serviceKey(g, created.body.id, { defaults: { metadata: { owner: 'one' } } });
    const two = await serviceKey(g, created.body.id);
    expect((await one.client.post('/v1/chat/completions', chat(), g.viaMock)).status).toBe(200);
    expect((await two.client.post('/v1/chat/completions', chat(), g.viaMock)).status).toBe(200);
    const refused = await two.client.post('/v1/chat/completions', chat(), g.viaMock);
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toContain('workspace research-lab');
    expect((await g.admin.post('/v1/chat/completions', chat(), g.viaMock)).status).toBe(200);
    const logs = await g.logs(3);
    const ofKey = (id: string) => logs.find((l: { api_key_id?: string }) => l.api_key_id === id);
    expect(ofKey(one.id)?.metadata).toMatchObject({ team: 'research', owner: 'one' });
    expect(ofKey(two.id)?.metadata).toMatchObject({ team: 'research' });

    // Removing the limit lets traffic through at once.
    expect((await g.admin.put(`/v1/admin/workspaces/${created.body.id}`, { rate_limits: [] })).status).toBe(200);
    expect((await two.client.post('/v1/chat/completions', chat(), g.viaMock)).status).toBe(200);

    // Bad values: 400 naming the field.
    const bad = async (body: Record<string, unknown>) => (await g.admin.post('/v1/admin/workspaces', body)).body.error;
    expect((await bad({ name: 'x', usage_limits: [{ credit_limit: 1 }, { credit_limit: 2 }] })).param).toBe(
      'usage_limits',
    );
    expect((await bad({ name: 'x', rate_limits: [{ type: 'requests', unit: 'rpm', value: -1 }] })).param).toMatch(
      /^rate_limits/,
    );
    expect((await bad({ name: 'x', users: ['nobody@example.test'] })).param).toBe('users[0]');
    const config = await bad({ name: 'x', defaults: { user_api_key_config: 'pc-1' } });
    expect(config.param).toMatch(/^defaults/);
    expect(config.message).toContain('not supported');
  });

  it('API keys omit unset fields and store alert_emails', async () => {
    const g = await startGateway();
    const key = await serviceKey(g, 'default', { alert_emails: ['Ops@example.test', 'ops@example.test'] });
    const read = (await g.admin.get(`/v1/api-keys/${key.id}`)).body;
    expect(read.alert_emails).toEqual(['ops@example.test']);
    expect(read).not.toHaveProperty('description');
    expect(read).not.toHaveProperty('usage_limits');
    expect(read).not.toHaveProperty('defaults');
    expect((await g.admin.put(`/v1/api-keys/${key.id}`, { alert_emails: null })).status).toBe(200);
    expect((await g.admin.get(`/v1/api-keys/${key.id}`)).body.alert_emails).toEqual([]);
    const bad = await g.admin.put(`/v1/api-keys/${key.id}`, { alert_emails: ['not an address'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toMatch(/^alert_emails/);
  });

  it("invites give the member's first key the scopes of workspace_api_key_details", async () => {
    const g = await startGateway();
    const invited = await g.admin.post('/v1/admin/users/invites', {
      email: 'lee@example.test',
      role: 'member',
      workspaces: [{ id: 'default', role: 'member' }],
      workspace_api_key_details: { scopes: ['completions.write', 'logs.list'], name: 'Lee gateway key' },
    });
    expect(invited.status).toBe(200);
    const accepted = await apiClient(g.baseUrl).post('/v1/invites/accept', { token: invited.body.token });
    const key = (await g.admin.get(`/v1/api-keys/${accepted.body.api_key_id}`)).body;
    expect(key).toMatchObject({ name: 'Lee gateway key', scopes: ['completions.write', 'logs.list'] });

    const badScope = await g.admin.post('/v1/invites', {
      email: 'kim@example.test',
      role: 'member',
      workspaces: [{ id: 'default', role: 'member' }],
      workspace_api_key_details: { scopes: ['workspaces.create'] },
    });
    expect(badScope.body.error.param).toBe('workspace_api_key_details.scopes[0]');
    const forAdmin = await g.admin.post('/v1/invites', {
      email: 'kim@example.test',
      role: 'admin',
      workspaces: [],
      workspace_api_key_details: { scopes: ['completions.write'] },
    });
    expect(forAdmin.body.error.param).toBe('workspace_api_key_details');
  });

  it('an admin key makes organisation-wide policies without workspace_id, within its organisation only', async () => {
    const g = await startGateway();
    const team = await g.admin.post('/v1/workspaces', { name: 'Team B', slug: 'team-b' });
    const created = await g.admin.post('/v1/policies/rate-limits', {
      conditions: [{ key: 'workspace_id', value: 'team-b' }],
      group_by: [{ key: 'workspace_id' }],
      type: 'requests',
      unit: 'rpm',
      value: 1,
    });
    expect(created.status).toBe(200);
    const policy = (await g.admin.get(`/v1/policies/rate-limits/${created.body.id}`)).body;
    const home = (await g.admin.get('/v1/workspaces/default')).body.id;
    expect(policy.workspace_id).toBe(home);
    expect(policy.conditions).toEqual([{ key: 'workspace_id', value: 'team-b' }]);
    expect(team.status).toBe(200);
    const key = await serviceKey(g, 'team-b');
    expect((await key.client.post('/v1/chat/completions', chat(), g.viaMock)).status).toBe(200);
    expect((await key.client.post('/v1/chat/completions', chat(), g.viaMock)).status).toBe(429);
    expect((await g.admin.post('/v1/chat/completions', chat(), g.viaMock)).status).toBe(200);

    const usage = await g.admin.post('/v1/policies/usage-limits', {
      conditions: [{ key: 'organisation_id', value: '00000000-0000-4000-8000-000000000000' }],
      group_by: [{ key: 'api_key' }],
      type: 'cost',
      credit_limit: 5,
    });
    expect(usage.status).toBe(403);
    expect(usage.body.error.param).toBe('conditions[0].value');
  });
});
