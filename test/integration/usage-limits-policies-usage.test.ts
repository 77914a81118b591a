import { describe, expect, it } from 'vitest';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient, type ApiClient } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/start-test-server.js';

const PATH = '/v1/policies/usage-limits';

async function createPolicy(admin: ApiClient, overrides: Record<string, unknown> = {}) {
  const res = await admin.post(PATH, {
    conditions: [{ key: 'workspace_id', value: 'default' }],
    group_by: [{ key: 'api_key' }],
    type: 'cost',
    credit_limit: 10,
    workspace_id: 'default',
    ...overrides,
  });
  if (res.status !== 200) throw new Error(`policy create failed: ${JSON.stringify(res.body)}`);
  const policy = (await admin.get(`${PATH}/${res.body.id}`)).body as { id: string; created_at: string };
  return policy;
}

/** Settled usage as the enforcement code stores it: one usage_counters row per bucket and period. */
async function addUsage(t: TestServer, policyId: string, valueKey: string, usage: number, periodStart: string) {
  await t.server.db
    .insertInto('usage_counters')
    .values({
      scope_type: 'policy',
      scope_id: policyId,
      value_key: valueKey,
      period_start: periodStart,
      current_usage: usage,
      last_updated_at: new Date().toISOString(),
    })
    .execute();
}

const bucketsOf = async (t: TestServer, policyId: string) =>
  (
    await t.server.db
      .selectFrom('usage_counters')
      .select(['value_key', 'period_start'])
      .where('scope_id', '=', policyId)
      .orderBy('value_key')
      .execute()
  ).map((r) => `${r.value_key}@${r.period_start}`);

describe('usage-limits policies: usage of the current period', () => {
  it('adds value_key_usage_map with include_usage, from the current period only', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const policy = await createPolicy(admin);
    const other = await createPolicy(admin);
    await addUsage(t, policy.id, 'key-a', 2.5, policy.created_at);
    await addUsage(t, policy.id, 'key-b', 10, policy.created_at);
    await addUsage(t, policy.id, 'key-c', 99, '2000-01-01T00:00:00.000Z'); // an earlier period
    await addUsage(t, other.id, 'key-d', 1, other.created_at);
    await t.server.db
      .insertInto('usage_counters')
      .values({
        scope_type: 'api_key',
        scope_id: policy.id,
        value_key: 'key-e',
        period_start: policy.created_at,
        current_usage: 1,
        last_updated_at: policy.created_at,
      })
      .execute();

    const got = await admin.get(`${PATH}/${policy.id}?include_usage=true`);
    expect(got.status).toBe(200);
    expect(got.body.value_key_usage_map).toEqual({
      'key-a': { current_usage: 2.5, status: 'active' },
      'key-b': { current_usage: 10, status: 'exhausted' },
    });
    expect((await admin.get(`${PATH}/${policy.id}?include_usage=false`)).body).not.toHaveProperty(
      'value_key_usage_map',
    );
    expect((await admin.get(`${PATH}/${other.id}?include_usage=true`)).body.value_key_usage_map).toEqual({
      'key-d': { current_usage: 1, status: 'active' },
    });
    expect((await admin.get(`${PATH}/${policy.id}?include_usage=yes`)).status).toBe(400);

    // Raising the credit limit makes an exhausted bucket active again.
    await admin.put(`${PATH}/${policy.id}`, { credit_limit: 20 });
    expect((await admin.get(`${PATH}/${policy.id}?include_usage=true`)).body.value_key_usage_map['key-b'].status).toBe(
      'active',
    );

    // After a reset the period starts at last_reset_at: earlier buckets no longer count.
    const lastReset = '2030-01-01T00:00:00.000Z';
    await t.server.db
      .updateTable('usage_limit_policies')
      .set({ last_reset_at: lastReset })
      .where('id', '=', policy.id)
      .execute();
    await addUsage(t, policy.id, 'key-a', 1, lastReset);
    const afterReset = (await admin.get(`${PATH}/${policy.id}?include_usage=true`)).body;
    expect(afterReset.last_reset_at).toBe(lastReset);
    expect(afterReset.value_key_usage_map).toEqual({ 'key-a': { current_usage: 1, status: 'active' } });
  });

  it('resets one bucket of the current period through PUT reset_usage_for_value', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const policy = await createPolicy(admin);
    await addUsage(t, policy.id, 'key-a', 3, policy.created_at);
    await addUsage(t, policy.id, 'key-a', 3, '2000-01-01T00:00:00.000Z');
    await addUsage(t, policy.id, 'key-b', 4, policy.created_at);

    expect((await admin.put(`${PATH}/${policy.id}`, { reset_usage_for_value: 'key-a' })).status).toBe(200);
    expect(await bucketsOf(t, policy.id)).toEqual(['key-a@2000-01-01T00:00:00.000Z', `key-b@${policy.created_at}`]);
    expect((await admin.get(`${PATH}/${policy.id}?include_usage=true`)).body.value_key_usage_map).toEqual({
      'key-b': { current_usage: 4, status: 'active' },
    });
    // A value without usage: nothing to forget, still 200.
    expect((await admin.put(`${PATH}/${policy.id}`, { reset_usage_for_value: 'nobody' })).status).toBe(200);
  });
});

describe('usage-limits policies: entities', () => {
  it('lists one row per bucket, resolves API keys and workspaces, and adds the ones conditions name', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const ws = await createWorkspace(admin, 'Team A', 'team-a');
    const k1 = await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: [] });
    const k2 = await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: [] });
    const revoked = await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: [] });
    await admin.delete(`/v1/api-keys/${revoked.id}`);

    // Grouped by API key; the conditions name k1, k2, a revoked key and a workspace by slug (an
    // unknown key is refused when the policy is saved: rate-limits-policies tests).
    const byKey = await createPolicy(admin, {
      conditions: [
        { key: 'api_key', value: k1.id },
        { key: 'api_key', value: k2.id },
        { key: 'api_key', value: revoked.id },
        { key: 'workspace_id', value: 'team-a' },
        { key: 'metadata.env', value: 'prod' },
      ],
    });
    await addUsage(t, byKey.id, k1.id, 12, byKey.created_at);
    await addUsage(t, byKey.id, 'not-a-key-id', 3, byKey.created_at);
    await addUsage(t, byKey.id, k2.id, 50, '2000-01-01T00:00:00.000Z'); // an earlier period: k2 has no bucket yet

    const list = await admin.get(`${PATH}/${byKey.id}/entities`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      object: 'list',
      total: 4,
      data: [
        {
          id: k1.id,
          value_key: k1.id,
          current_usage: 12,
          status: 'exhausted',
          entity_type: 'api_key',
          entity_id: k1.id,
        },
        {
          id: 'not-a-key-id',
          value_key: 'not-a-key-id',
          current_usage: 3,
          status: 'active',
          entity_type: 'api_key',
          entity_id: 'not-a-key-id',
        },
        { id: k2.id, value_key: k2.id, current_usage: 0, status: 'active', entity_type: 'api_key', entity_id: k2.id },
        { id: ws.id, value_key: ws.id, current_usage: 0, status: 'active', entity_type: 'workspace', entity_id: ws.id },
      ],
    });

    // Filters and pages run across buckets and the named entities alike.
    const ids = async (query: string) => {
      const res = await admin.get(`${PATH}/${byKey.id}/entities?${query}`);
      expect(res.status, query).toBe(200);
      return { total: res.body.total, ids: res.body.data.map((e: { id: string }) => e.id) };
    };
    expect(await ids('status=exhausted')).toEqual({ total: 1, ids: [k1.id] });
    expect(await ids('status=active')).toEqual({ total: 3, ids: ['not-a-key-id', k2.id, ws.id] });
    expect(await ids('search=NOT-A')).toEqual({ total: 1, ids: ['not-a-key-id'] });
    expect(await ids(`search=${k2.id.slice(4, 12)}`)).toEqual({ total: 1, ids: [k2.id] });
    expect(await ids('search=%25')).toEqual({ total: 0, ids: [] });
    expect(await ids('page_size=1&current_page=1')).toEqual({ total: 4, ids: ['not-a-key-id'] });
    expect(await ids('page_size=3&current_page=0')).toEqual({ total: 4, ids: [k1.id, 'not-a-key-id', k2.id] });
    expect(await ids('page_size=3&current_page=1')).toEqual({ total: 4, ids: [ws.id] });
    expect(await ids('page_size=2&current_page=5')).toEqual({ total: 4, ids: [] });
    for (const query of ['page_size=0', 'page_size=101', 'current_page=-1', 'status=archived', 'search=', 'bogus=1']) {
      const res = await admin.get(`${PATH}/${byKey.id}/entities?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
    }

    // A bucket for k2 in the current period replaces its placeholder.
    await addUsage(t, byKey.id, k2.id, 1, byKey.created_at);
    expect(await ids('')).toEqual({ total: 4, ids: [k1.id, 'not-a-key-id', k2.id, ws.id] });
    expect((await admin.get(`${PATH}/${byKey.id}/entities?search=${k2.id}`)).body.data[0].current_usage).toBe(1);
  });

  it('resolves composite value keys by their group-by position and leaves metadata buckets unresolved', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const { workspaceId } = t.server.bootstrap;
    const composite = await createPolicy(admin, { group_by: [{ key: 'metadata.user' }, { key: 'workspace_id' }] });
    await addUsage(t, composite.id, `alice|${workspaceId}`, 1, composite.created_at);
    await addUsage(t, composite.id, 'bob|with|pipes', 2, composite.created_at);
    const rows = (await admin.get(`${PATH}/${composite.id}/entities`)).body.data;
    expect(rows).toEqual([
      {
        id: 'bob|with|pipes',
        value_key: 'bob|with|pipes',
        current_usage: 2,
        status: 'active',
        entity_type: null,
        entity_id: null,
      },
      // The condition names the default workspace, and the alice bucket belongs to it: no placeholder.
      {
        id: `alice|${workspaceId}`,
        value_key: `alice|${workspaceId}`,
        current_usage: 1,
        status: 'active',
        entity_type: 'workspace',
        entity_id: workspaceId,
      },
    ]);

    const byMetadata = await createPolicy(admin, {
      conditions: [{ key: 'metadata.team', value: 'ml' }],
      group_by: [{ key: 'metadata.user' }],
    });
    await addUsage(t, byMetadata.id, 'carol', 1, byMetadata.created_at);
    expect((await admin.get(`${PATH}/${byMetadata.id}/entities`)).body.data).toEqual([
      { id: 'carol', value_key: 'carol', current_usage: 1, status: 'active', entity_type: null, entity_id: null },
    ]);
  });

  it('resets a bucket through the entity reset endpoint, value keys with separators included', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const policy = await createPolicy(admin, {
      conditions: [{ key: 'metadata.team', value: 'ml' }],
      group_by: [{ key: 'metadata.user' }, { key: 'metadata.path' }],
    });
    await addUsage(t, policy.id, 'alice|a/b c', 11, policy.created_at);
    await addUsage(t, policy.id, 'alice|a/b c', 5, '2000-01-01T00:00:00.000Z');
    await addUsage(t, policy.id, 'bob|x', 2, policy.created_at);

    const reset = await admin.put(`${PATH}/${policy.id}/entities/${encodeURIComponent('alice|a/b c')}/reset`);
    expect(reset.status).toBe(200);
    expect(reset.body).toEqual({});
    expect(await bucketsOf(t, policy.id)).toEqual([
      'alice|a/b c@2000-01-01T00:00:00.000Z',
      `bob|x@${policy.created_at}`,
    ]);
    expect((await admin.get(`${PATH}/${policy.id}/entities`)).body).toMatchObject({
      total: 1,
      data: [{ value_key: 'bob|x', current_usage: 2 }],
    });
    // Resetting again (or a bucket that never had usage) is a no-op.
    expect((await admin.put(`${PATH}/${policy.id}/entities/${encodeURIComponent('alice|a/b c')}/reset`)).status).toBe(
      200,
    );
    expect(await bucketsOf(t, policy.id)).toHaveLength(2);
  });
});
