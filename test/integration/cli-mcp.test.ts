import { describe, expect, it } from 'vitest';
import { cliAgainstServer, runCliWithInput } from '../helpers/cli.js';
import { startMcpUpstream, startTokenEndpoint } from '../helpers/mcp-upstream.js';

describe('svcgw mcp', () => {
  it(
    'registers an integration, shares it, makes a server, tests it and switches capabilities',
    { timeout: 180_000 },
    async () => {
      const { ok, cli, fails, api } = await cliAgainstServer();
      const upstream = await startMcpUpstream({ authorize: (headers) => headers['x-api-key'] === 'cli-upstream-key' });

      const created = await ok([
        'mcp',
        'integrations',
        'create',
        '--name',
        'Upstream',
        '--slug',
        'up',
        '--url',
        upstream.url,
        '--auth',
        'headers',
        '--header',
        'X-Api-Key=cli-upstream-key',
      ]);
      expect(created).toMatchObject({ slug: 'up', object: 'mcp-integration' });
      const shown = await ok(['mcp', 'integrations', 'get', 'up']);
      expect(shown.configurations).toEqual({ custom_headers: { 'X-Api-Key': '****' } });
      const table = await cli(['mcp', 'integrations', 'list']);
      expect(table.stdout).toMatch(/up\s+Upstream\s+organisation/);

      await ok(['mcp', 'integrations', 'share', 'up', '--all-workspaces']);
      expect((await ok(['mcp', 'integrations', 'workspaces', 'up'])).global_workspace_access).toEqual({
        enabled: true,
      });

      await ok(['mcp', 'servers', 'create', '--name', 'Tools', '--slug', 'tools', '--integration', 'up']);
      const tested = await cli(['mcp', 'servers', 'test', 'tools']);
      expect(tested.code).toBe(0);
      expect(tested.stdout).toMatch(/Connected to test-upstream/);
      expect((await ok(['mcp', 'servers', 'get', 'tools'])).url).toMatch(/\/v1\/mcp\/tools\/mcp$/);
      expect((await ok(['mcp', 'integrations', 'metadata', 'up'])).server_name).toBe('test-upstream');

      await ok(['mcp', 'integrations', 'disable', 'up', 'shout', 'fail']);
      await ok(['mcp', 'servers', 'disable', 'tools', 'echo']);
      const tools = await ok(['mcp', 'servers', 'capabilities', 'tools', '--type', 'tool']);
      expect(tools.data.map((c: any) => `${c.name}:${c.enabled}`)).toEqual([
        'add:true',
        'count:true',
        'echo:false',
        'fail:false',
        'shout:false',
      ]);
      await ok(['mcp', 'servers', 'enable', 'tools', 'echo']);
      expect((await ok(['mcp', 'integrations', 'capabilities', 'up', '--type', 'prompt'])).total).toBe(2);

      await ok(['mcp', 'servers', 'access', 'tools', '--default', 'deny']);
      expect((await ok(['mcp', 'servers', 'access', 'tools'])).default_user_access).toBe('deny');
      expect((await ok(['mcp', 'servers', 'connections', 'tools'])).total).toBe(0);

      // A server that cannot be reached: exit 1 with the reason.
      await upstream.close();
      const down = await cli(['mcp', 'servers', 'test', 'tools']);
      expect(down.code).toBe(1);
      expect(down.stdout).toMatch(/Could not connect: .*could not be reached/);

      await fails(['mcp', 'servers', 'delete', 'tools'], 2, /--yes/);
      await ok(['mcp', 'servers', 'delete', 'tools', '--yes']);
      await ok(['mcp', 'integrations', 'delete', 'up', '--yes']);
      expect((await api.get('/v1/mcp-integrations/up')).body.status).toBe('archived');
      await fails(['mcp', 'integrations', 'create', '--name', 'x', '--url', 'ftp://nope'], 1, /url/);
    },
  );

  it('takes the OAuth client secret from standard input', { timeout: 120_000 }, async () => {
    const { ok, env } = await cliAgainstServer();
    const tokens = await startTokenEndpoint({ id: 'cli-client', secret: 'cli-secret-value-123' });
    const upstream = await startMcpUpstream({
      authorize: (headers) => tokens.issued.some((token) => headers.authorization === `Bearer ${token}`),
    });
    const created = await runCliWithInput(
      [
        'mcp',
        'integrations',
        'create',
        '--name',
        'OAuth',
        '--slug',
        'oauth',
        '--url',
        upstream.url,
        '--auth',
        'oauth_client_credentials',
        '--client-id',
        'cli-client',
        '--client-secret-stdin',
        '--token-url',
        tokens.url,
        '--json',
      ],
      'cli-secret-value-123\n',
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    await ok(['mcp', 'integrations', 'share', 'oauth', '--all-workspaces']);
    await ok(['mcp', 'servers', 'create', '--name', 'OAuth tools', '--slug', 'oauth-tools', '--integration', 'oauth']);
    expect((await ok(['mcp', 'servers', 'test', 'oauth-tools'])).success).toBe(true);
    expect(tokens.issued.length).toBeGreaterThan(0);
  });
});
