import { describe, expect, it } from 'vitest';
import { startA2aAgent } from '../helpers/a2a-agent.js';
import { cliAgainstServer, runCliWithInput } from '../helpers/cli.js';

describe('svcgw agents', () => {
  it(
    'manages agent integrations and servers, and the agent answers through the gateway',
    { timeout: 180_000 },
    async () => {
      const agent = await startA2aAgent({ token: 'cli-peer-secret' });
      const { ok, cli, fails, api, env, server } = await cliAgainstServer();

      // The token comes from standard input, never the command line.
      const created = await runCliWithInput(
        [
          'agents',
          'integrations',
          'create',
          '--name',
          'Echo agent',
          '--slug',
          'echo-agent',
          '--url',
          agent.url,
          '--bearer-token-stdin',
          '--global',
          '--json',
        ],
        'cli-peer-secret\n',
        env,
      );
      expect(created.code, created.stderr).toBe(0);
      expect(JSON.parse(created.stdout)).toMatchObject({ slug: 'echo-agent', sync_status: 'ok' });
      const listed = await cli(['agents', 'integrations', 'list']);
      expect(listed.stdout).toMatch(/echo-agent\s+Echo agent\s+organisation/);
      const shown = await ok(['agents', 'integrations', 'get', 'echo-agent']);
      expect(shown.configurations).toEqual({ bearer_token: '[REDACTED]' });
      expect((await ok(['agents', 'integrations', 'metadata', 'echo-agent'])).protocol_version).toBe('1.0');
      expect((await ok(['agents', 'integrations', 'skills', 'echo-agent'])).data.map((s: any) => s.id)).toEqual([
        'echo',
        'shout',
        'whisper',
      ]);
      await ok(['agents', 'integrations', 'set-skills', 'echo-agent', '--skill', 'whisper=off']);
      expect((await ok(['agents', 'integrations', 'sync', 'echo-agent'])).sync_status).toBe('ok');
      const access = await ok(['agents', 'integrations', 'workspaces', 'echo-agent']);
      expect(access.global_workspace_access).toEqual({ enabled: true });
      await ok(['agents', 'integrations', 'workspaces', 'echo-agent', '--global', 'off', '--enable', 'default']);
      expect((await api.get('/v1/agent-integrations/echo-agent/workspaces')).body.global_workspace_access.enabled).toBe(
        false,
      );

      const made = await ok([
        'agents',
        'servers',
        'create',
        '--name',
        'Echo',
        '--integration',
        'echo-agent',
        '--workspace',
        'default',
        '--slug',
        'echo',
      ]);
      expect(made.url).toBe(`${server.baseUrl}/v1/agents/echo`);
      expect((await cli(['agents', 'servers', 'list'])).stdout).toMatch(/echo\s+Echo\s+default\s+echo-agent\s+allow/);
      const test = await cli(['agents', 'servers', 'test', 'echo']);
      expect(test.code).toBe(0);
      expect(test.stdout).toMatch(/Reached Echo agent \(HTTP 200/);
      await ok(['agents', 'servers', 'set-skills', 'echo', '--skill', 'shout=off']);
      const skills = await ok(['agents', 'servers', 'skills', 'echo']);
      expect(skills.counts).toEqual({ total: 3, enabled: 1 });
      await ok(['agents', 'servers', 'user-access', 'echo', '--default', 'deny']);
      expect((await ok(['agents', 'servers', 'user-access', 'echo'])).default_user_access).toBe('deny');
      await ok(['agents', 'servers', 'update', 'echo', '--name', 'Echo (renamed)']);
      expect((await ok(['agents', 'servers', 'get', 'echo'])).name).toBe('Echo (renamed)');

      // The admin key is a service key: user access does not apply to it.
      const answer = await fetch(made.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-api-key': env.SVCGW_API_KEY },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'message/send',
          params: {
            message: {
              kind: 'message',
              role: 'user',
              messageId: 'm1',
              parts: [{ kind: 'text', text: 'from the cli test' }],
            },
          },
        }),
      });
      expect(((await answer.json()) as any).result.artifacts[0].parts[0].text).toBe('echo: from the cli test');

      // docs/agents.md: a rate-limits policy on agent calls.
      const policy = await ok(
        ['policies', 'rate-limits', 'create', '--workspace', 'default', '--name', 'agents 60 rpm per key'].concat([
          '--condition',
          'endpoint_type=agent',
          '--group-by',
          'api_key',
          '--unit',
          'rpm',
          '--value',
          '60',
        ]),
      );
      expect((await api.get(`/v1/policies/rate-limits/${policy.id}`)).body.conditions).toEqual([
        { key: 'endpoint_type', value: 'agent' },
      ]);

      await fails(['agents', 'servers', 'user-access', 'echo', '--user', 'nobody'], 2, /--user takes/);
      await fails(['agents', 'integrations', 'create', '--name', 'x', '--url', 'ftp://x'], 1, /url/);
      await fails(['agents', 'servers', 'get', 'nope'], 1, /not found/);
      await ok(['agents', 'servers', 'delete', 'echo', '--yes']);
      await ok(['agents', 'integrations', 'delete', 'echo-agent', '--yes']);
      expect((await ok(['agents', 'integrations', 'list', '--status', 'archived'])).total).toBe(1);
      expect((await cli(['agents', '--help'])).stdout).toMatch(/integrations[\s\S]*servers/);
    },
  );
});
