import { describe, expect, it } from 'vitest';
import { cliAgainstServer } from '../helpers/cli.js';
import { apiClient } from '../helpers/http.js';

describe('destructive CLI commands ask first', () => {
  it('without a terminal they need --yes (exit 2, nothing changed); with --yes they run', async () => {
    const { server, ok, fails, api } = await cliAgainstServer();
    const key = await api.post('/v1/api-keys/organisation/service', { name: 'ci', scopes: ['workspaces.list'] });
    expect(key.status).toBe(200);

    const refused = await fails(['keys', 'delete', key.body.id], 2, /--yes/);
    expect(refused.stderr).toContain(`revoke API key ${key.body.id}`);
    expect((await apiClient(server.baseUrl, key.body.key).get('/v1/workspaces')).status).toBe(200);

    await ok(['workspaces', 'create', '--name', 'Team A', '--slug', 'team-a']);
    await fails(['workspaces', 'archive', 'team-a'], 2, /pass --yes/);
    expect((await api.get('/v1/workspaces/team-a')).body.status).toBe('active');

    await ok(['keys', 'delete', key.body.id, '--yes']);
    expect((await apiClient(server.baseUrl, key.body.key).get('/v1/workspaces')).status).toBe(401);
    await ok(['workspaces', 'archive', 'team-a', '--yes']);
    expect((await api.get('/v1/workspaces/team-a')).body.status).toBe('archived');
  });
});
