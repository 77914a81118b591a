import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { createBrowser, oidcProviderForms } from '../helpers/browser.js';
import { createWorkspace } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startOidcProvider } from '../helpers/oidc-provider.js';
import {
  atLoopback,
  configureOidc,
  exchangeCode,
  LOOPBACK,
  oidcSession,
  oidcSignIn,
  pkcePair,
  startUrl,
} from '../helpers/sso.js';
import { startTestServer } from '../helpers/start-test-server.js';

const ACCOUNTS = {
  alice: { email: 'Alice@Example.test', email_verified: true, given_name: 'Alice', family_name: 'Liddell' },
  owner: { email: 'owner@svcgw.local', email_verified: true },
  newcomer: { email: 'newcomer@example.test', email_verified: true },
  unverified: { email: 'unverified@example.test', email_verified: false },
};

async function setUp(env: Record<string, string> = {}) {
  const clock = createManualClock(Date.now());
  const t = await startTestServer({ clock, env });
  const idp = await startOidcProvider({
    redirectUris: [`${t.baseUrl}/v1/sso/oidc/callback`],
    accounts: ACCOUNTS,
    extraScopes: ['groups'],
  });
  const owner = apiClient(t.baseUrl, t.adminKey);
  return { t, idp, owner, clock };
}

describe('single sign-on with OIDC (authorization code with PKCE, oidc-provider as the IdP)', () => {
  it('signs in a first-time user through the whole flow, accepts their pending invite and gives them a session', async () => {
    const { t, idp, owner } = await setUp({ OIDC_CUSTOM_SCOPES: 'groups, svcgw.audit' });
    const teamA = await createWorkspace(owner, 'Team A', 'team-a');
    const invite = await owner.post('/v1/invites', {
      email: 'alice@example.test',
      role: 'member',
      workspaces: [{ id: 'team-a', role: 'manager' }],
    });
    expect(invite.status).toBe(200);

    const settings = await configureOidc(owner, idp);
    expect(settings.oidc).toMatchObject({
      issuer: idp.issuer,
      client_id: 'svcgw',
      client_secret_set: true,
      redirect_uri: `${t.baseUrl}/v1/sso/oidc/callback`,
    });
    expect(settings.oidc.scopes).toEqual(['openid', 'email', 'profile', 'groups', 'svcgw.audit']);
    expect(JSON.stringify(settings)).not.toContain(idp.clientSecret);

    const { back, verifier } = await oidcSignIn(t.baseUrl, 'alice');
    // The browser comes back to the client's loopback address with a one-time code, never the session.
    expect(back.origin + back.pathname).toBe(LOOPBACK);
    expect(back.searchParams.get('state')).toBe('client-state');
    expect(back.searchParams.get('code')).toMatch(/^svlogin-/);
    expect(back.href).not.toContain('svs-');

    // The provider saw PKCE, and the scopes of OIDC_CUSTOM_SCOPES.
    const authorization = idp.authorizations[0]!;
    expect(authorization.get('scope')!.split(' ')).toEqual(['openid', 'email', 'profile', 'groups', 'svcgw.audit']);
    expect(authorization.get('code_challenge_method')).toBe('S256');
    expect(authorization.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorization.get('redirect_uri')).toBe(`${t.baseUrl}/v1/sso/oidc/callback`);

    const signedIn = await exchangeCode(t.baseUrl, back, verifier);
    expect(signedIn.session_token).toMatch(/^svs-[A-Za-z0-9_-]{43}$/);
    expect(signedIn.user).toMatchObject({
      email: 'alice@example.test',
      role: 'member',
      first_name: 'Alice',
      last_name: 'Liddell',
      workspace_ids: [teamA.id],
    });
    expect(signedIn.session).toMatchObject({ identity_provider: 'oidc', subject: 'alice', status: 'active' });

    // The invite was accepted by the sign-in: the user is a manager of team-a, as invited.
    expect((await owner.get(`/v1/invites/${invite.body.id}`)).body.status).toBe('accepted');
    const members = await owner.get('/v1/workspaces/team-a/members');
    expect(members.body.data.map((m: any) => [m.email, m.role])).toEqual([['alice@example.test', 'manager']]);

    // The session acts as alice: a manager of team-a, on the control plane.
    const alice = apiClient(t.baseUrl, signedIn.session_token);
    expect((await alice.get('/v1/workspaces/team-a')).status).toBe(200);
    const key = await alice.post('/v1/api-keys/workspace/user', {
      name: 'alice cli',
      workspace_id: 'team-a',
      scopes: ['completions.write'],
    });
    expect(key.status, JSON.stringify(key.body)).toBe(200);
    expect((await alice.get('/v1/settings/security')).body.error.code).toBe('KEY_TYPE_NOT_ALLOWED');
    // As a bearer token too.
    const bearer = await apiClient(t.baseUrl).get('/v1/workspaces/team-a', {
      authorization: `Bearer ${signedIn.session_token}`,
    });
    expect(bearer.status).toBe(200);

    // The code works once.
    const again = await apiClient(t.baseUrl).post('/v1/sso/token', {
      code: back.searchParams.get('code'),
      code_verifier: verifier,
    });
    expect([again.status, again.body.error.code]).toEqual([400, 'INVALID_LOGIN_CODE']);

    // The sign-in is audited as the session, with the code redacted; its actions name it.
    const audit = await owner.get('/v1/audit-logs?resource_type=session');
    const created = audit.body.data.find((r: any) => r.action === 'create' && r.resource_type === 'session');
    expect(created).toMatchObject({ user_type: 'session', user_id: signedIn.user.id, api_key_id: signedIn.session.id });
    expect(JSON.stringify(created.request_body)).not.toContain(back.searchParams.get('code'));
    const keyAudit = (await owner.get('/v1/audit-logs')).body.data.find((r: any) => r.resource_type === 'api_key');
    expect(keyAudit).toMatchObject({ user_type: 'session', api_key_id: signedIn.session.id });

    // Secrets stay secret: sealed at rest, never logged.
    const row = await t.server.db.selectFrom('sso_settings').selectAll().executeTakeFirstOrThrow();
    expect(row.oidc_client_secret).toMatch(/^v1:/);
    expect(JSON.stringify(row)).not.toContain(idp.clientSecret);
    const stored = await t.server.db.selectFrom('sessions').selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain(signedIn.session_token);
    const logs = t.logLines.join('\n');
    for (const secret of [idp.clientSecret, signedIn.session_token, back.searchParams.get('code')!])
      expect(logs).not.toContain(secret);
  });

  it('signs in existing users as themselves (the owner acts on the whole organisation) and creates first-time users', async () => {
    const { t, idp, owner } = await setUp();
    await configureOidc(owner, idp);

    const ownerSession = await oidcSession(t.baseUrl, 'owner');
    expect(ownerSession.user).toMatchObject({ email: 'owner@svcgw.local', role: 'owner' });
    const asOwner = apiClient(t.baseUrl, ownerSession.session_token);
    expect((await asOwner.get('/v1/settings/security')).status).toBe(200);
    expect((await asOwner.post('/v1/workspaces', { name: 'Made by SSO', slug: 'made-by-sso' })).status).toBe(200);

    // No user, no invite: created as an organisation member of the default workspace.
    const newcomer = await oidcSession(t.baseUrl, 'newcomer');
    const defaultWorkspace = t.server.bootstrap.workspaceId;
    expect(newcomer.user).toMatchObject({
      email: 'newcomer@example.test',
      role: 'member',
      workspace_ids: [defaultWorkspace],
    });
    const asNewcomer = apiClient(t.baseUrl, newcomer.session_token);
    expect((await asNewcomer.get('/v1/workspaces/default')).status).toBe(200);
    expect((await asNewcomer.post('/v1/workspaces', { name: 'No' })).body.error.code).toBe('KEY_TYPE_NOT_ALLOWED');
    // A member cannot make keys, or invite (a session has what the user's first key would).
    const refused = await asNewcomer.post('/v1/api-keys/workspace/user', {
      name: 'x',
      workspace_id: 'default',
      scopes: [],
    });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'MISSING_SCOPE']);

    // Signing in again finds the same user.
    const again = await oidcSession(t.baseUrl, 'newcomer');
    expect(again.user.id).toBe(newcomer.user.id);
    expect(again.session.id).not.toBe(newcomer.session.id);
  });

  it('refuses, back at the client with a clear error: unprovisioned and unverified addresses, and a denied login', async () => {
    const { t, idp, owner } = await setUp();
    await configureOidc(owner, idp, { provisioning: { create_users: false } });

    const { back } = await oidcSignIn(t.baseUrl, 'newcomer');
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('error_code')).toBe('SSO_USER_NOT_PROVISIONED');
    expect(back.searchParams.get('error_description')).toMatch(/newcomer@example.test.*invite/);
    expect(back.searchParams.get('code')).toBeNull();
    expect((await owner.get('/v1/users?email=newcomer@example.test')).body.total).toBe(0);

    await owner.put('/v1/settings/sso', { provisioning: { create_users: true } });
    const unverified = await oidcSignIn(t.baseUrl, 'unverified');
    expect(unverified.back.searchParams.get('error_code')).toBe('SSO_USER_NOT_PROVISIONED');
    expect(unverified.back.searchParams.get('error_description')).toMatch(/not verified/);

    // The user aborts at the provider: its error comes back through svcgw to the client.
    const { challenge } = pkcePair();
    const browser = createBrowser();
    const aborted = await browser.follow(
      startUrl(t.baseUrl, '/v1/sso/oidc/start', { challenge }),
      atLoopback,
      (url) => ({ url: new URL(`${url.pathname}/abort`, url) }),
    );
    expect(aborted.searchParams.get('error_code')).toBe('SSO_LOGIN_FAILED');
    expect(aborted.searchParams.get('error_description')).toMatch(/access_denied/);
  });

  it('checks what the client sends: loopback redirect URIs only, PKCE on the code exchange, a known state', async () => {
    const { t, idp, owner } = await setUp();
    const anonymous = apiClient(t.baseUrl);
    const { challenge, verifier } = pkcePair();

    const unconfigured = await anonymous.get(
      startUrl(t.baseUrl, '/v1/sso/oidc/start', { challenge }).pathname +
        startUrl(t.baseUrl, '/v1/sso/oidc/start', { challenge }).search,
    );
    expect([unconfigured.status, unconfigured.body.error.code]).toEqual([400, 'SSO_NOT_CONFIGURED']);
    await configureOidc(owner, idp);

    for (const redirectUri of [
      'http://evil.example/cb',
      'http://localhost:8000/cb',
      'https://127.0.0.1:8000/cb',
      'http://127.0.0.1/cb',
    ]) {
      const url = startUrl(t.baseUrl, '/v1/sso/oidc/start', { challenge, redirectUri });
      const res = await anonymous.get(url.pathname + url.search);
      expect([res.status, res.body.error.code, res.body.error.param], redirectUri).toEqual([
        400,
        'INVALID_REQUEST',
        'redirect_uri',
      ]);
    }
    const noChallenge = await anonymous.get(`/v1/sso/oidc/start?redirect_uri=${encodeURIComponent(LOOPBACK)}`);
    expect([noChallenge.status, noChallenge.body.error.param]).toEqual([400, 'code_challenge']);
    expect(idp.authorizations).toHaveLength(0);

    // The generic start picks the configured provider.
    const generic = await fetch(startUrl(t.baseUrl, '/v1/sso/start', { challenge }), { redirect: 'manual' });
    expect(generic.status).toBe(302);
    expect(generic.headers.get('location')).toMatch(new RegExp(`^${idp.issuer}/auth\\?`));

    // An answer naming no login under way.
    const forged = await anonymous.get('/v1/sso/oidc/callback?code=abc&state=not-a-login');
    expect([forged.status, forged.body.error.code]).toEqual([401, 'SSO_LOGIN_FAILED']);

    // The code needs the verifier of the login that asked for it; a wrong one leaves the code usable.
    const { back, verifier: right } = await oidcSignIn(t.baseUrl, 'alice');
    const wrong = await anonymous.post('/v1/sso/token', {
      code: back.searchParams.get('code'),
      code_verifier: verifier,
    });
    expect([wrong.status, wrong.body.error.code, wrong.body.error.param]).toEqual([
      400,
      'INVALID_LOGIN_CODE',
      'code_verifier',
    ]);
    await exchangeCode(t.baseUrl, back, right);
    const unknown = await anonymous.post('/v1/sso/token', { code: `svlogin-${'A'.repeat(43)}`, code_verifier: right });
    expect([unknown.status, unknown.body.error.code]).toEqual([400, 'INVALID_LOGIN_CODE']);
  });

  it('checks the settings, keeps the stored secret when other fields change, and removes a provider', async () => {
    const { t, idp, owner } = await setUp();
    const badIssuer = await owner.put('/v1/settings/sso', {
      oidc: { issuer: 'http://idp.example.com', client_id: 'x', client_secret: 'y' },
    });
    expect([badIssuer.status, badIssuer.body.error.param]).toEqual([400, 'oidc.issuer']);
    const noSecret = await owner.put('/v1/settings/sso', { oidc: { issuer: idp.issuer, client_id: 'svcgw' } });
    expect([noSecret.status, noSecret.body.error.param]).toEqual([400, 'oidc.client_secret']);
    await configureOidc(owner, idp);
    // Changing the scopes keeps the stored secret.
    const scoped = await owner.put('/v1/settings/sso', {
      oidc: { issuer: idp.issuer, client_id: 'svcgw', scopes: ['groups'] },
    });
    expect(scoped.body.oidc).toMatchObject({
      client_secret_set: true,
      scopes: ['openid', 'email', 'profile', 'groups'],
    });
    await oidcSession(t.baseUrl, 'alice');

    // The audit record of the change has the secret redacted.
    const audit = await owner.get('/v1/audit-logs?resource_type=sso_settings');
    expect(audit.body.data.length).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(audit.body.data)).not.toContain(idp.clientSecret);

    const removed = await owner.put('/v1/settings/sso', { oidc: null });
    expect(removed.body.oidc).toBeNull();
    const { challenge } = pkcePair();
    const url = startUrl(t.baseUrl, '/v1/sso/oidc/start', { challenge });
    expect((await apiClient(t.baseUrl).get(url.pathname + url.search)).body.error.code).toBe('SSO_NOT_CONFIGURED');
  });
});

// Used by the CLI test through the same provider forms.
export { oidcProviderForms };
