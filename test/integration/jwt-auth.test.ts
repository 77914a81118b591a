import { createScimToken, patchOp, scimClient } from '../helpers/scim.js';
import { randomUUID } from 'node:crypto';
import { SignJWT, type JWTPayload } from 'jose';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { addUser, createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { startGateway, type GatewayHarness } from '../helpers/gateway.js';
import { apiClient } from '../helpers/http.js';
import { startIdp, type Idp } from '../helpers/jwks-server.js';

const ISSUER = 'https://idp.example.test/';
const AUDIENCE = 'svcgw-gateway';
const SCOPES = 'completions.write logs.list configs.list configs.read configs.create workspaces.list openid';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Setup {
  g: GatewayHarness;
  idp: Idp;
  clock: ReturnType<typeof createManualClock>;
  memberEmail: string;
  teamA: { id: string; slug: string };
  token(claims?: JWTPayload, kid?: string, header?: Record<string, unknown>): Promise<string>;
  /** GET /v1/configs with the token in x-service-api-key: a control-plane read every valid token may do. */
  read(token: string): Promise<{ status: number; body: any }>;
  chat(headers: Record<string, string>, content?: string): Promise<{ status: number; body: any }>;
}

/** The gateway with a mock provider, an IdP on loopback, JWT authentication configured, and a member of team-a. */
async function setup(settings: Record<string, unknown> = {}, configure = true): Promise<Setup> {
  const clock = createManualClock(Date.parse('2026-03-02T09:00:00Z'));
  const g = await startGateway({ clock });
  const idp = await startIdp();
  await idp.makeKey('k1');
  const orgId = g.server.bootstrap.organisationId;
  const teamA = await createWorkspace(g.admin, 'Team A', 'team-a');
  await createWorkspace(g.admin, 'Team B', 'team-b');
  const memberId = await addUser(g.server.db, orgId, 'member', [{ workspaceId: teamA.id, role: 'member' }]);
  const memberEmail = `${memberId}@example.test`;
  if (configure) {
    const put = await g.admin.put('/v1/settings/jwt', {
      jwks_url: idp.jwksUrl,
      issuer: ISSUER,
      audience: [AUDIENCE],
      ...settings,
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
  }
  const now = () => Math.floor(clock.now() / 1000);
  return {
    g,
    idp,
    clock,
    memberEmail,
    teamA,
    token: (claims = {}, kid = 'k1', header) =>
      idp.sign(
        kid,
        {
          iss: ISSUER,
          aud: AUDIENCE,
          sub: 'alice',
          email: memberEmail,
          workspace_slug: 'team-a',
          scope: SCOPES,
          iat: now(),
          exp: now() + 3600,
          ...claims,
        },
        header,
      ),
    read: (token) => apiClient(g.baseUrl, token).get('/v1/configs'),
    async chat(headers, content = 'hello') {
      const res = await fetch(`${g.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
      });
      return { status: res.status, body: await res.json() };
    },
  };
}

const jwtAudit = async (s: Setup) =>
  (await s.g.admin.get('/v1/audit-logs?resource_type=jwt&page_size=100')).body.data as any[];

describe('JWT authentication', () => {
  it('sends a gateway request with a JWT to the provider and logs it with the user, under one key id per user', async () => {
    const s = await setup();
    const first = await s.chat({
      ...s.g.viaMock,
      'x-service-api-key': await s.token(),
      // The token says who the user is; the request's own metadata cannot say otherwise.
      'x-service-metadata': JSON.stringify({ _user: 'mallory', team: 'blue' }),
    });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.choices[0].message.content).toEqual(expect.any(String));
    // Authorization stays the provider key when the JWT is in x-service-api-key.
    expect(s.g.mock.requests[0]!.headers.authorization).toBe('Bearer provider-secret-key');

    s.clock.advance(60_000);
    const second = await s.chat({ ...s.g.viaMock, 'x-service-api-key': await s.token({ jti: randomUUID() }) });
    expect(second.status).toBe(200);
    const bot = await s.chat({
      ...s.g.viaMock,
      'x-service-api-key': await s.token({ sub: 'batch-bot', email: undefined }),
    });
    expect(bot.status).toBe(200);

    const logs = await s.g.logs(3);
    const byUser = (user: string) => logs.filter((log: any) => log.metadata?._user === user);
    const alice = byUser(s.memberEmail);
    expect(alice).toHaveLength(2);
    expect(alice[0].workspace_id).toBe(s.teamA.id);
    expect(alice.find((log: any) => log.metadata.team === 'blue')).toBeDefined();
    // Two tokens of one user: one stable key id, which the key filters take like any key's.
    expect(alice[0].api_key_id).toMatch(UUID);
    expect(alice[1].api_key_id).toBe(alice[0].api_key_id);
    const filtered = await s.g.admin.get(`/v1/logs?api_key_id=${alice[0].api_key_id}`);
    expect(filtered.body.data).toHaveLength(2);
    const [botLog] = byUser('batch-bot');
    expect(botLog.api_key_id).toMatch(UUID);
    expect(botLog.api_key_id).not.toBe(alice[0].api_key_id);
  });

  it('takes the JWT as Authorization: Bearer too, never forwarding it, and allows reading and listing only', async () => {
    const s = await setup();
    const token = await s.token();
    const bearer = apiClient(s.g.baseUrl);
    const auth = { authorization: `Bearer ${token}` };

    const list = await bearer.get('/v1/configs', auth);
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    expect((await bearer.get('/v1/logs', auth)).status).toBe(200);

    // configs.create was in the token: writing on the control plane is not for JWTs.
    const create = await bearer.post('/v1/configs', { name: 'c', config: { retry: { attempts: 1 } } }, auth);
    expect(create.status).toBe(403);
    expect(create.body.error.code).toBe('MISSING_SCOPE');
    expect(create.body.error.message).toMatch(/configs\.create.*only read and list scopes/);
    // workspaces.list was in the token too, but an organisation-wide scope is not for a workspace's caller.
    const workspaces = await bearer.get('/v1/workspaces', auth);
    expect(workspaces.status).toBe(403);
    expect((await bearer.get('/v1/settings/security', auth)).body.error.code).toBe('KEY_TYPE_NOT_ALLOWED');

    const narrow = await s.token({ scope: 'completions.write' });
    const refused = await bearer.get('/v1/configs', { authorization: `Bearer ${narrow}` });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe('The JWT lacks the scope configs.list.');

    // On the gateway, a bearer JWT authenticates and is not the provider key.
    const viaBearer = await s.chat({
      authorization: `Bearer ${token}`,
      'x-service-provider': 'openai',
      'x-service-custom-host': s.g.mock.baseUrl,
    });
    expect(viaBearer.status, JSON.stringify(viaBearer.body)).toBe(200);
    expect(s.g.mock.requests.at(-1)!.headers.authorization).toBeUndefined();
    // And a provider key that merely looks like a JWT keeps its meaning next to an svcgw key.
    const withKey = await s.chat({
      ...s.g.viaMock,
      'x-service-api-key': s.g.adminKey,
      authorization: `Bearer ${token}`,
    });
    expect(withKey.status).toBe(200);
    expect(s.g.mock.requests.at(-1)!.headers.authorization).toBe(`Bearer ${token}`);
  });

  it('refuses every bad token with 401, a message that says why, and an audit record without the token', async () => {
    const s = await setup();
    const now = Math.floor(s.clock.now() / 1000);
    await s.idp.makeKey('k-unpublished', { publish: false });
    await createWorkspace(s.g.admin, 'Old team', 'old-team');
    expect((await s.g.admin.delete('/v1/workspaces/old-team')).status).toBe(200);
    const hs256 = await new SignJWT({
      iss: ISSUER,
      aud: AUDIENCE,
      sub: 'alice',
      workspace_slug: 'team-a',
      scope: SCOPES,
    })
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .setExpirationTime(now + 600)
      .sign(new TextEncoder().encode('a shared secret of thirty-two bytes!'));
    const cases: Array<[string, string, string, RegExp]> = [
      [
        'expired',
        await s.token({ exp: now - 120 }),
        'JWT_EXPIRED',
        /expired at 2026-03-02T08:58:00\.000Z \(clock tolerance 30 s\)/,
      ],
      ['not_yet_valid', await s.token({ nbf: now + 600 }), 'INVALID_JWT', /not valid before 2026-03-02T09:10:00\.000Z/],
      [
        'unknown_issuer',
        await s.token({ iss: 'https://evil.example/' }),
        'INVALID_JWT',
        /issuer "https:\/\/evil\.example\/"/,
      ],
      ['wrong_audience', await s.token({ aud: 'another-api' }), 'INVALID_JWT', /audience "another-api" is not one/],
      ['unknown_kid', await s.token({}, 'k-unpublished'), 'INVALID_JWT', /kid "k-unpublished"/],
      ['bad_signature', await s.token({}, 'k-unpublished', { kid: 'k1' }), 'INVALID_JWT', /signature does not verify/],
      ['algorithm_not_allowed', hs256, 'INVALID_JWT', /signed with "HS256"; accepted algorithms: RS256/],
      [
        'missing_claim',
        await s.token({ workspace_slug: undefined }),
        'INVALID_JWT',
        /no workspace claim \("workspace_slug" or "workspace_id"\)/,
      ],
      ['missing_claim', await s.token({ exp: undefined }), 'INVALID_JWT', /no "exp" claim: tokens must expire/],
      ['invalid_claim', await s.token({ scope: 42 }), 'INVALID_JWT', /"scope" claim \(scopes\) must be/],
      [
        'unknown_workspace',
        await s.token({ workspace_slug: 'nope' }),
        'INVALID_JWT',
        /workspace "nope" is not a workspace/,
      ],
      [
        'not_a_member',
        await s.token({ workspace_slug: 'team-b' }),
        'INVALID_JWT',
        /is not a member of workspace "team-b"/,
      ],
      ['workspace_archived', await s.token({ workspace_slug: 'old-team' }), 'INVALID_JWT', /"old-team" is archived/],
      ['wrong_organisation', await s.token({ organisation_id: randomUUID() }), 'INVALID_JWT', /names organisation/],
      ['malformed', 'eyJhbGciOiJSUzI1NiJ9.bm90LWpzb24.c2lnbmF0dXJl', 'INVALID_JWT', /not a valid JWT/],
    ];
    for (const [reason, token, code, message] of cases) {
      const res = await s.read(token);
      expect(res.status, reason).toBe(401);
      expect(res.body.error, reason).toMatchObject({
        code,
        type: 'authentication_error',
        message: expect.stringMatching(message),
      });
    }
    // Within the clock tolerance an expired token still passes.
    expect((await s.read(await s.token({ exp: now - 20 }))).status).toBe(200);

    const records = await jwtAudit(s);
    expect(records.map((r) => r.resource_id).sort()).toEqual(cases.map(([reason]) => reason).sort());
    for (const record of records) {
      expect(record).toMatchObject({
        user_type: 'jwt',
        action: 'authenticate',
        resource_type: 'jwt',
        method: 'GET',
        uri: '/v1/configs',
        response_status_code: 401,
        request_body: null,
      });
      expect(record.detail).toEqual(expect.any(String));
    }
    // Signed tokens name the caller's key id (and user, once known); unverified ones name nobody.
    const member = records.find((r) => r.resource_id === 'not_a_member');
    expect(member.api_key_id).toMatch(UUID);
    expect(member.user_id).toEqual(expect.any(String));
    expect(records.find((r) => r.resource_id === 'bad_signature').api_key_id).toBeNull();
    const text = JSON.stringify(records);
    for (const [, token] of cases) expect(text).not.toContain(token.split('.')[2]);
    // Failed JWTs are found with the audit filters too.
    const byMethod = await s.g.admin.get('/v1/audit-logs?resource_type=jwt&method=GET&resource_id=expired');
    expect(byMethod.body.data).toHaveLength(1);
  });

  it('refuses the JWTs of a user the identity provider deprovisioned over SCIM, from the next request', async () => {
    const s = await setup();
    expect((await s.chat({ ...s.g.viaMock, 'x-service-api-key': await s.token() })).status).toBe(200);
    const idp = scimClient(s.g.baseUrl, (await createScimToken(s.g.admin)).token);
    const found = await idp.call('GET', `/Users?filter=${encodeURIComponent(`userName eq "${s.memberEmail}"`)}`);
    expect(found.body.totalResults).toBe(1);
    const off = await idp.call(
      'PATCH',
      `/Users/${found.body.Resources[0].id}`,
      patchOp({ op: 'replace', value: { active: false } }),
    );
    expect(off.status).toBe(200);
    const refused = await s.chat({ ...s.g.viaMock, 'x-service-api-key': await s.token() });
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toContain('is deactivated');
    expect((await jwtAudit(s)).map((r) => r.resource_id)).toContain('user_deactivated');
  });

  it('refuses JWTs before set-up, when turned off, and for unknown users when those are required', async () => {
    const s = await setup({}, false);
    const token = await s.token();
    const before = await s.read(token);
    expect(before.status).toBe(401);
    expect(before.body.error.message).toMatch(/JWT authentication is not configured/);
    expect((await s.g.admin.get('/v1/settings/jwt')).status).toBe(404);

    const bad = await s.g.admin.put('/v1/settings/jwt', { jwks_url: 'ftp://idp/keys', issuer: ISSUER, audience: null });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('jwks_url');
    const base = { jwks_url: s.idp.jwksUrl, issuer: ISSUER, audience: [AUDIENCE] };
    const off = await s.g.admin.put('/v1/settings/jwt', { ...base, enabled: false });
    expect(off.body).toMatchObject({
      object: 'jwt_settings',
      enabled: false,
      clock_tolerance_seconds: 30,
      require_known_user: false,
      claims: { user: ['sub'], workspace: ['workspace_slug', 'workspace_id'], scopes: ['scope', 'scopes'] },
    });
    expect((await s.read(token)).body.error.message).toMatch(/turned off/);

    await s.g.admin.put('/v1/settings/jwt', { ...base, require_known_user: true });
    expect((await s.read(token)).status).toBe(200);
    const stranger = await s.read(await s.token({ sub: 'bot-7', email: 'bot@elsewhere.test' }));
    expect(stranger.status).toBe(401);
    expect(stranger.body.error.message).toMatch(
      /No user of this organisation matches the token \(user "bot-7", e-mail "bot@elsewhere.test"\)/,
    );

    // Only owners and admins change it; the change is audited like any other.
    const wsKey = await createWorkspaceKey(s.g.admin, { workspace_id: 'team-a', scopes: ['workspaces.read'] });
    expect((await apiClient(s.g.baseUrl, wsKey.key).put('/v1/settings/jwt', base)).status).toBe(403);
    const changes = await s.g.admin.get('/v1/audit-logs?resource_type=jwt_settings');
    expect(changes.body.data.map((r: any) => r.response_status_code)).toEqual([200, 200, 400]);

    expect((await s.g.admin.delete('/v1/settings/jwt')).status).toBe(200);
    expect((await s.read(token)).body.error.message).toMatch(/not configured/);
    expect((await jwtAudit(s)).map((r) => r.resource_id)).toEqual([
      'not_configured',
      'unknown_user',
      'disabled',
      'not_configured',
    ]);
  });

  it('follows the IdP rotating its keys: a new kid works once the JWKS is fetched again, a retired or unknown one fails', async () => {
    const s = await setup({ jwks_cache_seconds: 3600 });
    expect((await s.read(await s.token())).status).toBe(200);
    expect((await s.read(await s.token())).status).toBe(200);
    expect(s.idp.fetches()).toBe(1); // cached

    await s.idp.makeKey('k2', { publish: false });
    s.idp.publish(['k2']); // k1 retired
    // Just fetched: an unknown kid waits out the 30 s cooldown rather than fetch on every token.
    expect((await s.read(await s.token({}, 'k2'))).status).toBe(401);
    expect(s.idp.fetches()).toBe(1);
    s.clock.advance(31_000);
    const rotated = await s.read(await s.token({}, 'k2'));
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(s.idp.fetches()).toBe(2);
    expect((await s.read(await s.token({}, 'k2'))).status).toBe(200);

    const retired = await s.read(await s.token({}, 'k1'));
    expect(retired.status).toBe(401);
    expect(retired.body.error.message).toMatch(/kid "k1"/);
    await s.idp.makeKey('k3', { publish: false });
    s.clock.advance(31_000);
    const unknown = await s.read(await s.token({}, 'k3'));
    expect(s.idp.fetches()).toBe(3); // fetched again, and k3 is still not there
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.message).toMatch(/kid "k3"\), also after fetching the JWKS again/);
  });

  it('answers 503 while the JWKS cannot be fetched at all, and keeps using fetched keys when it fails later', async () => {
    const s = await setup({ jwks_cache_seconds: 60 });
    s.idp.failWith(500);
    const down = await s.read(await s.token());
    expect(down.status).toBe(503);
    expect(down.body.error).toMatchObject({ code: 'JWKS_UNAVAILABLE', message: expect.stringMatching(/HTTP 500/) });
    expect((await jwtAudit(s))[0]).toMatchObject({ resource_id: 'jwks_unavailable', response_status_code: 503 });

    s.idp.failWith(null);
    s.clock.advance(31_000);
    expect((await s.read(await s.token())).status).toBe(200);
    s.idp.failWith(500);
    s.clock.advance(120_000); // past jwks_cache_seconds: due again, and the IdP is down
    expect((await s.read(await s.token())).status).toBe(200);
    expect(s.idp.fetches()).toBe(3);
    expect(s.g.logLines.some((line) => line.includes('JWKS refresh failed'))).toBe(true);
  });

  it("applies the workspace's guardrails to JWT requests", async () => {
    const s = await setup();
    const set = await s.g.admin.put('/v1/workspaces/team-a', {
      defaults: { input_guardrails: [{ 'default.contains': { operator: 'none', words: ['password'] }, deny: true }] },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const token = await s.token();
    const denied = await s.chat({ ...s.g.viaMock, 'x-service-api-key': token }, 'my password is hunter2');
    expect(denied.status).toBe(446);
    expect(denied.body.error.code).toBe('HOOKS_DENIED');
    expect(s.g.mock.requests).toHaveLength(0);
    const fine = await s.chat({ ...s.g.viaMock, 'x-service-api-key': token }, 'hello there');
    expect(fine.status).toBe(200);
    expect(fine.body.hook_results.before_request_hooks).toHaveLength(1);
  });
});
