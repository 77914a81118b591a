import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/start-test-server.js';
import { cliAgainstServer } from '../helpers/cli.js';
import { addUser } from '../helpers/fixtures.js';

const RPM = ['--condition', 'endpoint_type=chatComplete', '--group-by', 'api_key', '--unit', 'rpm', '--value', '10'];

describe('the CLI addresses resources by name, slug or email where unique', () => {
  it('workspaces, configs, integrations and providers by slug', { timeout: 90_000 }, async () => {
    const { ok, fails } = await cliAgainstServer();
    const ws = await ok(['workspaces', 'create', '--name', 'Team A', '--slug', 'team-a']);
    expect((await ok(['workspaces', 'get', 'team-a'])).id).toBe(ws.id);
    await ok([
      'integrations',
      'create',
      '--name',
      'OpenAI',
      '--slug',
      'oai',
      '--provider',
      'openai',
      '--key',
      'sk-test-123456789abcdef',
      '--no-default-provider',
    ]);
    expect((await ok(['integrations', 'get', 'oai'])).slug).toBe('oai');
    await ok([
      'providers',
      'create',
      '--name',
      'OpenAI A',
      '--slug',
      'oai-a',
      '--integration',
      'oai',
      '--workspace',
      'team-a',
    ]);
    expect((await ok(['providers', 'get', 'oai-a', '--workspace', 'team-a'])).slug).toBe('oai-a');
    const file = join(makeTempDir(), 'chat.json');
    writeFileSync(file, '{"provider":"@oai-a"}');
    await ok(['configs', 'create', '--name', 'Chat', '--slug', 'chat', '--workspace', 'team-a', '-f', file]);
    expect((await ok(['configs', 'get', 'chat'])).slug).toBe('chat');
    await fails(['workspaces', 'get', 'no-such'], 1, /Workspace not found/);
  });

  it(
    'users and members by email; policies by name, ambiguous names refused with the list',
    { timeout: 90_000 },
    async () => {
      const { ok, fails, server } = await cliAgainstServer();
      const org = server.server.bootstrap.organisationId;
      const userId = await addUser(server.server.db, org, 'member');
      const user = (await ok(['users', 'get', userId])) as { email: string };
      expect((await ok(['users', 'get', user.email.toUpperCase()])).id).toBe(userId);
      await ok(['users', 'update', user.email, '--role', 'admin']);
      expect((await ok(['users', 'get', userId])).role).toBe('admin');
      await fails(['users', 'get', 'nobody@example.test'], 1, /no user has the id or email nobody@example\.test/);

      await ok(['members', 'add', '--workspace', 'default', '--user-id', user.email, '--role', 'member']);
      expect((await ok(['members', 'get', user.email, '--workspace', 'default'])).role).toBe('member');
      await ok(['members', 'update', user.email, '--workspace', 'default', '--role', 'manager']);
      expect((await ok(['members', 'get', userId, '--workspace', 'default'])).role).toBe('manager');

      const first = await ok([
        'policies',
        'rate-limits',
        'create',
        '--workspace',
        'default',
        '--name',
        'chat rpm',
        ...RPM,
      ]);
      expect((await ok(['policies', 'rate-limits', 'get', 'chat rpm'])).id).toBe(first.id);
      await ok(['policies', 'rate-limits', 'update', 'chat rpm', '--value', '20']);
      expect((await ok(['policies', 'rate-limits', 'get', first.id])).value).toBe(20);
      const usage = await ok([
        'policies',
        'usage-limits',
        'create',
        '--workspace',
        'default',
        '--name',
        'budget',
        '--condition',
        'workspace_id=default',
        '--group-by',
        'api_key',
        '--credit-limit',
        '5',
      ]);
      await ok(['policies', 'usage-limits', 'update', 'budget', '--credit-limit', '7']);
      expect((await ok(['policies', 'usage-limits', 'get', 'budget'])).credit_limit).toBe(7);
      await ok(['policies', 'usage-limits', 'archive', 'budget', '--yes']);
      expect((await ok(['policies', 'usage-limits', 'get', 'budget'])).id).toBe(usage.id); // the archived one

      const second = await ok([
        'policies',
        'rate-limits',
        'create',
        '--workspace',
        'default',
        '--name',
        'chat rpm',
        ...RPM,
      ]);
      const ambiguous = await fails(
        ['policies', 'rate-limits', 'get', 'chat rpm'],
        2,
        /2 rate-limits policies are named chat rpm; give one of their ids/,
      );
      expect(ambiguous.stderr).toContain(first.id);
      expect(ambiguous.stderr).toContain(second.id);
      await fails(
        ['policies', 'rate-limits', 'archive', 'no such', '--yes'],
        1,
        /no rate-limits policy has the id or name no such/,
      );
    },
  );
});
