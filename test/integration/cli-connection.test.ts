import { statSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { makeTempDir, startTestServer } from '../helpers/start-test-server.js';

describe('svcgw login and connection errors', () => {
  it('checks the key, saves a 0600 profile that later commands use, and forgets it on logout', async () => {
    const server = await startTestServer();
    const config = makeTempDir();
    const env = { XDG_CONFIG_HOME: config };

    const refused = await runCli(['login', '--base-url', server.baseUrl, '--api-key', 'svc-wrong'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/the API key was refused by http:\/\/127\.0\.0\.1/);
    expect(() => statSync(join(config, 'svcgw', 'profiles.json'))).toThrow();

    const login = await runCli(['login', '--base-url', `${server.baseUrl}/v1`, '--profile', 'local'], {
      ...env,
      SVCGW_API_KEY: server.adminKey,
    });
    expect(login.code, login.stderr).toBe(0);
    const file = join(config, 'svcgw', 'profiles.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      current: 'local',
      profiles: { local: { base_url: server.baseUrl, api_key: server.adminKey } },
    });

    const listed = await runCli(['workspaces', 'list', '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).data[0].slug).toBe('default');
    // The stored key is not sent to a server the profile does not name.
    const elsewhere = await runCli(['workspaces', 'list'], { ...env, SVCGW_BASE_URL: 'http://127.0.0.1:9' });
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toMatch(/no API key/);
    expect((await runCli(['workspaces', 'list', '--profile', 'other'], env)).code).toBe(2);

    expect((await runCli(['logout', '--profile', 'local'], env)).code).toBe(0);
    const after = await runCli(['workspaces', 'list'], env);
    expect(after.code).toBe(2);
    expect(after.stderr).toMatch(/no API key: pass --api-key, set SVCGW_API_KEY, or save one with svcgw login/);
  });

  it('says so when the server cannot be reached or the base URL is not one', async () => {
    const env = { XDG_CONFIG_HOME: makeTempDir(), SVCGW_API_KEY: 'svc-any' };
    const down = await runCli(['keys', 'list', '--base-url', 'http://127.0.0.1:9'], env);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^svcgw: cannot reach the server at http:\/\/127\.0\.0\.1:9/);
    const bad = await runCli(['keys', 'list', '--base-url', 'not a url'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/is not a URL/);
  });

  it('has help with examples for every command group', async () => {
    const groups = [
      'keys',
      'workspaces',
      'members',
      'users',
      'invites',
      'integrations',
      'providers',
      'virtual-keys',
      'policies rate-limits',
      'policies usage-limits',
      'logs',
      'audit-logs',
      'apply',
      'login',
    ];
    const helps = await Promise.all(groups.map((group) => runCli([...group.split(' '), '--help'])));
    helps.forEach((help, i) => {
      expect(help.code, groups[i]).toBe(0);
      expect(help.stdout, groups[i]).toMatch(/Examples:\n {2}\S/);
    });
    const root = await runCli(['--help']);
    for (const group of ['apply', 'keys', 'logs', 'audit-logs', 'virtual-keys', 'policies'])
      expect(root.stdout).toMatch(new RegExp(`\\n {2}${group} `));
    expect((await runCli(['keys'])).code).toBe(2); // a group without a command is a usage error
  });
});
