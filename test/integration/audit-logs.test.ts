import { describe, expect, it } from 'vitest';
import { createWorkspace, createWorkspaceKey, validPolicy } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

describe('audit log', () => {
  it('writes one record per control-plane mutation with actor, action, resource, time, IP and redacted details', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const adminKeyId = (await admin.get('/v1/api-keys')).body.data[0].id;

    const ws = await createWorkspace(admin, 'Team A', 'team-a');
    const key = await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: ['completions.write'] });
    const policy = (await admin.post('/v1/policies/rate-limits', validPolicy({ workspace_id: 'team-a' }))).body;
    await admin.put(`/v1/policies/rate-limits/${policy.id}`, { value: 7 });
    await admin.delete(`/v1/policies/rate-limits/${policy.id}`);
    await admin.delete(`/v1/api-keys/${key.id}`);
    // Reads are not audited.
    await admin.get('/v1/policies/rate-limits');
    await admin.get(`/v1/api-keys/${key.id}`);

    const res = await admin.get('/v1/audit-logs');
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(6);
    const records = [...res.body.data].reverse();
    expect(records.map((r: any) => [r.resource_type, r.action, r.method])).toEqual([
      ['workspace', 'create', 'POST'],
      ['api_key', 'create', 'POST'],
      ['rate_limits_policy', 'create', 'POST'],
      ['rate_limits_policy', 'update', 'PUT'],
      ['rate_limits_policy', 'delete', 'DELETE'],
      ['api_key', 'delete', 'DELETE'],
    ]);
    expect(records.map((r: any) => r.resource_id)).toEqual([ws.id, key.id, policy.id, policy.id, policy.id, key.id]);
    for (const record of records) {
      expect(record).toMatchObject({
        user_type: 'api_key',
        api_key_id: adminKeyId,
        user_id: expect.any(String),
        client_ip: '127.0.0.1',
        response_status_code: 200,
      });
      expect(Date.parse(record.timestamp)).not.toBeNaN();
      expect(record.request_id).toBeTruthy();
    }
    expect(records[2].workspace_id).toBe(ws.id);
    expect(records[3]).toMatchObject({ uri: `/v1/policies/rate-limits/${policy.id}`, request_body: { value: 7 } });

    // No key or secret anywhere in the audit records or the server's log lines.
    const everything = JSON.stringify(res.body) + t.logLines.join('\n');
    expect(everything).not.toContain(key.key);
    expect(everything).not.toContain(t.adminKey);
  });

  it('records refused mutations too, and filters by time, actor, resource type and action', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const before = new Date().toISOString();
    await admin.post('/v1/policies/rate-limits', validPolicy({ unit: 'rpy' })); // 400: no such unit
    await admin.post('/v1/policies/rate-limits', validPolicy({ workspace_id: 'default' }));
    await createWorkspace(admin, 'Team A', 'team-a');
    const other = await createWorkspaceKey(admin, { workspace_id: 'team-a', scopes: ['rate_limits_policies.create'] });
    await apiClient(t.baseUrl, other.key).post(
      '/v1/policies/rate-limits',
      validPolicy({ conditions: [{ key: 'workspace_id', value: 'team-a' }] }),
    );
    // Unauthenticated attempts have no actor and are not recorded as actions.
    await apiClient(t.baseUrl).post('/v1/policies/rate-limits', validPolicy());

    const policies = await admin.get('/v1/audit-logs?resource_type=rate_limits_policy');
    expect(policies.body.data.map((r: any) => r.response_status_code)).toEqual([200, 200, 400]);
    const byOther = await admin.get(`/v1/audit-logs?api_key_id=${other.id}`);
    expect(byOther.body.total).toBe(1);
    expect(byOther.body.data[0].workspace_id).toBe((await admin.get('/v1/workspaces/team-a')).body.id);
    expect((await admin.get('/v1/audit-logs?action=create&resource_type=workspace')).body.total).toBe(1);
    expect((await admin.get(`/v1/audit-logs?start_time=${before}`)).body.total).toBe(5);
    expect((await admin.get('/v1/audit-logs?end_time=2000-01-01T00:00:00Z')).body.total).toBe(0);
    expect((await admin.get('/v1/audit-logs?page_size=2')).body.data).toHaveLength(2);
    expect((await admin.get('/v1/audit-logs?page_size=101')).status).toBe(400);
    expect((await admin.get('/v1/audit-logs?start_time=yesterday')).status).toBe(400);
    // Workspace keys cannot read the organisation's audit log.
    expect((await apiClient(t.baseUrl, other.key).get('/v1/audit-logs')).status).toBe(403);
  });

  it("takes the reference's filters: organisation_id, uri, request_id, user_type, response_status_code, client_ip, country", async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const organisationId = (await admin.get('/v1/workspaces/default')).body.organisation_id;
    const created = await admin.post('/v1/workspaces', { name: 'Team A', slug: 'team-a' }, { 'cf-ipcountry': 'de' });
    expect(created.status).toBe(200);
    const requestId = created.headers.get('x-request-id')!;
    await admin.post('/v1/policies/rate-limits', validPolicy({ unit: 'rpy' }), { 'x-country': 'FR' }); // 400: no such unit
    const list = (query: string) => admin.get(`/v1/audit-logs?${query}`);

    expect((await list(`organisation_id=${organisationId}`)).body.total).toBe(2);
    const other = await list('organisation_id=00000000-0000-4000-8000-000000000000');
    expect(other.status).toBe(400);
    expect(other.body.error).toMatchObject({
      param: 'organisation_id',
      message: expect.stringMatching(/own organisation/),
    });

    const byUri = await list('uri=/v1/workspaces');
    expect(byUri.body.data.map((r: any) => r.resource_type)).toEqual(['workspace']);
    expect((await list('uri=/v1/workspaces/team-a')).body.total).toBe(0);

    const byRequest = await list(`request_id=${requestId}`);
    expect(byRequest.body.data).toHaveLength(1);
    expect(byRequest.body.data[0]).toMatchObject({ request_id: requestId, country: 'DE', client_ip: '127.0.0.1' });
    expect((await list('request_id=no-such-request')).body.total).toBe(0);

    expect((await list('user_type=api_key')).body.total).toBe(2);
    expect((await list('user_type=user')).body.total).toBe(0);
    expect((await list('user_type=robot')).status).toBe(400);

    expect((await list('response_status_code=400')).body.data.map((r: any) => r.country)).toEqual(['FR']);
    expect((await list('response_status_code=200')).body.data.map((r: any) => r.resource_type)).toEqual(['workspace']);
    expect((await list('response_status_code=abc')).status).toBe(400);

    expect((await list('client_ip=127.0.0.1')).body.total).toBe(2);
    expect((await list('client_ip=10.0.0.1')).body.total).toBe(0);

    expect((await list('country=de')).body.data.map((r: any) => r.resource_type)).toEqual(['workspace']);
    expect((await list('country=US')).body.total).toBe(0);
    expect((await list('country=Germany')).status).toBe(400);
  });
});
