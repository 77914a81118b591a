import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { createBrowser, oidcProviderForms } from '../helpers/browser.js';
import { runCli, spawnCli, waitForOutput } from '../helpers/cli.js';
import { apiClient } from '../helpers/http.js';
import { startOidcProvider } from '../helpers/oidc-provider.js';
import { configureOidc } from '../helpers/sso.js';
import { makeTempDir, startTestServer } from '../helpers/start-test-server.js';

async function setUp() {
  const clock = createManualClock(Date.now());
  const t = await startTestServer({ clock });
  const idp = await startOidcProvider({
    redirectUris: [`${t.baseUrl}/v1/sso/oidc/callback`],
    accounts: { owner: { email: 'owner@svcgw.local' }, stranger: { email: 'stranger@example.test' } },
  });
  const owner = apiClient(t.baseUrl, t.adminKey);
  await configureOidc(owner, idp);
  return { t, idp, owner, clock, env: { XDG_CONFIG_HOME: makeTempDir() } };
}

/** The test plays the browser: from the identity provider's address to the CLI's loopback listener. */
async function playBrowser(address: string, account: string) {
  const browser = createBrowser();
  const back = await browser.follow(
    new URL(address),
    (url) => url.pathname === '/callback',
    oidcProviderForms(account),
  );
  expect(back.hostname).toBe('127.0.0.1');
  const page = await browser.request(back);
  return { status: page.status, html: await page.text() };
}

const IDP_ADDRESS = /http:\/\/127\.0\.0\.1:\d+\/auth\?\S+/;

describe('svcgw login --sso', () => {
  it('signs in through the browser, saves the session as the profile, uses it, and logs out', async () => {
    const { t, env, owner, clock } = await setUp();
    const login = spawnCli(['login', '--sso', '--no-browser', '--base-url', t.baseUrl, '--json'], env);
    const address = await waitForOutput(login.stderr, IDP_ADDRESS);
    expect(login.stderr()).toMatch(/open this address in a browser/);

    const page = await playBrowser(address, 'owner');
    expect(page.status).toBe(200);
    expect(page.html).toMatch(/signed in to svcgw/);
    expect(await login.exited).toBe(0);
    const result = JSON.parse(login.stdout());
    expect(result).toMatchObject({ profile: 'default', base_url: t.baseUrl, user: 'owner@svcgw.local', role: 'owner' });

    const profiles = JSON.parse(readFileSync(join(env.XDG_CONFIG_HOME, 'svcgw', 'profiles.json'), 'utf8'));
    const token: string = profiles.profiles.default.api_key;
    expect(token).toMatch(/^svs-/);

    // Later commands use the session.
    const workspaces = await runCli(['workspaces', 'list', '--json'], env);
    expect(workspaces.code, workspaces.stderr).toBe(0);
    const sessions = await runCli(['sessions', 'list', '--user', 'owner@svcgw.local', '--json'], env);
    expect(sessions.code, sessions.stderr).toBe(0);
    expect(JSON.parse(sessions.stdout).data).toHaveLength(1);

    // Past the session's expiry the CLI says to sign in again.
    clock.advance(86_400_000);
    const expired = await runCli(['workspaces', 'list'], env);
    expect(expired.code).toBe(1);
    expect(expired.stderr).toMatch(/the session was refused by .*expired.*Re-authenticate: svcgw login --sso/);
    clock.advance(-86_400_000);

    // Logging out ends the session on the server, then forgets the profile.
    const logout = await runCli(['logout'], env);
    expect(logout.code, logout.stderr).toBe(0);
    expect(logout.stderr).toMatch(/Ended the session/);
    const after = await apiClient(t.baseUrl, token).get('/v1/workspaces');
    expect([after.status, after.body.error.code]).toEqual([401, 'INVALID_SESSION']);
    const listed = await owner.get('/v1/sessions');
    expect(listed.body.data[0]).toMatchObject({ status: 'revoked', end_reason: 'logout' });
    expect((await runCli(['workspaces', 'list'], env)).code).toBe(2);
  });

  it('opens the address with SVCGW_BROWSER, and shows the refusal in the browser and on stderr', async () => {
    const { t, env, owner } = await setUp();
    await owner.put('/v1/settings/sso', { provisioning: { create_users: false } });
    const dir = makeTempDir();
    const opened = join(dir, 'opened.txt');
    const opener = join(dir, 'open-browser.sh');
    writeFileSync(opener, `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`);
    chmodSync(opener, 0o755);

    const login = spawnCli(['login', '--sso', '--base-url', t.baseUrl], { ...env, SVCGW_BROWSER: opener });
    const address = await waitForOutput(() => {
      try {
        return readFileSync(opened, 'utf8');
      } catch {
        return '';
      }
    }, IDP_ADDRESS);
    expect(login.stderr()).toContain(address);
    const page = await playBrowser(address, 'stranger');
    expect(page.status).toBe(401);
    expect(page.html).toMatch(/Sign-in failed/);
    expect(await login.exited).toBe(1);
    expect(login.stderr()).toMatch(
      /svcgw: single sign-on failed: There is no user stranger@example.test and no pending invite.*\(SSO_USER_NOT_PROVISIONED\)/,
    );
    expect(() => readFileSync(join(env.XDG_CONFIG_HOME, 'svcgw', 'profiles.json'))).toThrow();
  });

  it('fails at once when the server has no identity provider, and waits no longer than --timeout', async () => {
    const t = await startTestServer();
    const env = { XDG_CONFIG_HOME: makeTempDir() };
    const none = await runCli(['login', '--sso', '--no-browser', '--base-url', t.baseUrl], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no identity provider.*\(HTTP 400 SSO_NOT_CONFIGURED\)/);

    const { t: configured, env: env2 } = await setUp();
    const slow = await runCli(
      ['login', '--sso', '--no-browser', '--timeout', '1', '--base-url', configured.baseUrl],
      env2,
    );
    expect(slow.code).toBe(1);
    expect(slow.stderr).toMatch(/no answer from the browser within 1 s/);
    const usage = await runCli(['login', '--base-url', configured.baseUrl], env2);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--api-key \(or SVCGW_API_KEY\) is required, or sign in with --sso/);
  });
});
