import { createScimToken, patchOp, scimClient } from '../helpers/scim.js';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { createWorkspace } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startOidcProvider } from '../helpers/oidc-provider.js';
import { configureOidc, oidcSession, oidcSignIn } from '../helpers/sso.js';
import { startTestServer } from '../helpers/start-test-server.js';

const MINUTE = 60_000;

async function setUp() {
  const clock = createManualClock(Date.now());
  const t = await startTestServer({ clock });
  const idp = await startOidcProvider({
    redirectUris: [`${t.baseUrl}/v1/sso/oidc/callback`],
    accounts: {
      owner: { email: 'owner@svcgw.local' },
      mia: { email: 'mia@example.test' },
      noah: { email: 'noah@example.test' },
    },
  });
  const owner = apiClient(t.baseUrl, t.adminKey);
  await configureOidc(owner, idp);
  return { t, owner, clock };
}

const refusal = async (token: string, baseUrl: string) => {
  const res = await apiClient(baseUrl, token).get('/v1/workspaces/default');
  return {
    status: res.status,
    code: res.body?.error?.code as string | undefined,
    message: res.body?.error?.message as string,
  };
};

describe('sessions', () => {
  it('expire by session_settings.max_session_ttl, on the clock, with a clear re-authenticate error', async () => {
    const { t, owner, clock } = await setUp();
    const settings = await owner.get('/v1/settings/sessions');
    expect(settings.body).toMatchObject({ session_settings: { max_session_ttl: null }, session_ttl: 86_400 });

    for (const bad of [899, 0, 1.5, '3600'])
      expect(
        (await owner.put('/v1/settings/sessions', { session_settings: { max_session_ttl: bad } })).body.error,
      ).toMatchObject({
        code: 'INVALID_REQUEST',
        param: 'session_settings.max_session_ttl',
      });
    const set = await owner.put('/v1/settings/sessions', { session_settings: { max_session_ttl: 900 } });
    expect(set.body).toMatchObject({ session_settings: { max_session_ttl: 900 }, session_ttl: 900 });

    const mia = await oidcSession(t.baseUrl, 'mia');
    expect(Date.parse(mia.session.expires_at) - Date.parse(mia.session.created_at)).toBe(900_000);
    clock.advance(899_000);
    expect((await refusal(mia.session_token, t.baseUrl)).status).toBe(200);
    clock.advance(1_000);
    const expired = await refusal(mia.session_token, t.baseUrl);
    expect(expired).toMatchObject({ status: 401, code: 'SESSION_EXPIRED' });
    expect(expired.message).toMatch(/max_session_ttl \(900 s\).*[Rr]e-authenticate/);
    expect((await owner.get(`/v1/sessions/${mia.session.id}`)).body.status).toBe('expired');

    // Signing in again gives a new session.
    const again = await oidcSession(t.baseUrl, 'mia');
    expect((await refusal(again.session_token, t.baseUrl)).status).toBe(200);
  });

  it('lowering max_session_ttl ends older sessions at once; without it a session lasts a day', async () => {
    const { t, owner, clock } = await setUp();
    const noah = await oidcSession(t.baseUrl, 'noah');
    expect(Date.parse(noah.session.expires_at) - Date.parse(noah.session.created_at)).toBe(86_400_000);
    clock.advance(60 * MINUTE);
    expect((await refusal(noah.session_token, t.baseUrl)).status).toBe(200);

    await owner.put('/v1/settings/sessions', { session_settings: { max_session_ttl: 1800 } });
    expect(await refusal(noah.session_token, t.baseUrl)).toMatchObject({ status: 401, code: 'SESSION_EXPIRED' });
    // Raising it again does not lengthen a session past the expiry it was given.
    await owner.put('/v1/settings/sessions', { session_settings: { max_session_ttl: null } });
    expect((await refusal(noah.session_token, t.baseUrl)).status).toBe(200);
    clock.advance(23 * 60 * MINUTE);
    expect(await refusal(noah.session_token, t.baseUrl)).toMatchObject({ status: 401, code: 'SESSION_EXPIRED' });
    const active = await owner.get('/v1/sessions?status=active');
    expect(active.body.total).toBe(0);
  });

  it('are listed and revoked by owners and admins; logging out ends one; removing the user ends theirs', async () => {
    const { t, owner } = await setUp();
    await createWorkspace(owner, 'Team A', 'team-a');
    const ownerSession = await oidcSession(t.baseUrl, 'owner');
    const mia1 = await oidcSession(t.baseUrl, 'mia');
    const mia2 = await oidcSession(t.baseUrl, 'mia');
    const noah = await oidcSession(t.baseUrl, 'noah');

    // The owner's own session administers sessions.
    const asOwner = apiClient(t.baseUrl, ownerSession.session_token);
    const all = await asOwner.get('/v1/sessions');
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(4);
    expect(JSON.stringify(all.body)).not.toMatch(/svs-/);
    const mias = await owner.get(`/v1/sessions?user_id=${mia1.user.id}`);
    expect(mias.body.data.map((s: any) => s.id).sort()).toEqual([mia1.session.id, mia2.session.id].sort());
    expect(mias.body.data[0]).toMatchObject({
      user_id: mia1.user.id,
      identity_provider: 'oidc',
      client: expect.any(String),
    });

    // A member's session cannot (sessions are organisation administration).
    const asMia = apiClient(t.baseUrl, mia1.session_token);
    expect((await asMia.get('/v1/sessions')).body.error.code).toBe('KEY_TYPE_NOT_ALLOWED');
    expect((await asMia.delete(`/v1/sessions/${noah.session.id}`)).body.error.code).toBe('KEY_TYPE_NOT_ALLOWED');

    // Revoked by an admin: at once.
    const revoked = await owner.delete(`/v1/sessions/${mia1.session.id}`);
    expect(revoked.body).toMatchObject({ status: 'revoked', end_reason: 'revoked' });
    const after = await refusal(mia1.session_token, t.baseUrl);
    expect(after).toMatchObject({ status: 401, code: 'INVALID_SESSION' });
    expect(after.message).toMatch(/ended by an administrator/);
    expect((await owner.delete(`/v1/sessions/${mia1.session.id}`)).status).toBe(200);
    expect((await refusal(mia2.session_token, t.baseUrl)).status).toBe(200);

    // Logging out ends the caller's own session only.
    const out = await apiClient(t.baseUrl, mia2.session_token).post('/v1/sessions/logout');
    expect(out.body).toMatchObject({ id: mia2.session.id, status: 'revoked', end_reason: 'logout' });
    expect(await refusal(mia2.session_token, t.baseUrl)).toMatchObject({ status: 401, code: 'INVALID_SESSION' });
    const keyLogout = await owner.post('/v1/sessions/logout');
    expect([keyLogout.status, keyLogout.body.error.code]).toEqual([400, 'INVALID_REQUEST']);

    // Deprovisioned by the identity provider over SCIM: the session stops at the next request.
    const mia3 = await oidcSession(t.baseUrl, 'mia');
    const idp = scimClient(t.baseUrl, (await createScimToken(owner)).token);
    const deactivated = await idp.call(
      'PATCH',
      `/Users/${mia1.user.id}`,
      patchOp({ op: 'replace', value: { active: false } }),
    );
    expect(deactivated.status).toBe(200);
    const suspended = await refusal(mia3.session_token, t.baseUrl);
    expect(suspended).toMatchObject({ status: 401, code: 'INVALID_SESSION' });
    expect(suspended.message).toMatch(/deactivated by the identity provider/);

    // Removing a user ends their sessions.
    expect((await owner.delete(`/v1/users/${noah.user.id}`)).status).toBe(200);
    expect(await refusal(noah.session_token, t.baseUrl)).toMatchObject({ status: 401, code: 'INVALID_SESSION' });
    expect((await owner.get(`/v1/sessions/${noah.session.id}`)).body).toMatchObject({
      status: 'revoked',
      end_reason: 'user_removed',
    });

    expect((await owner.get('/v1/sessions?status=revoked')).body.total).toBe(3);
    expect((await owner.get('/v1/sessions/not-an-id')).status).toBe(404);
    expect((await owner.get(`/v1/sessions/${crypto.randomUUID()}`)).status).toBe(404);
    const audit = await owner.get('/v1/audit-logs?resource_type=session');
    expect(audit.body.data.map((r: any) => r.action)).toEqual(expect.arrayContaining(['create', 'revoke', 'logout']));
  });

  it('act with the roles the user holds now, in the workspace they were opened for', async () => {
    const { t, owner } = await setUp();
    const teamA = await createWorkspace(owner, 'Team A', 'team-a');
    const first = await oidcSession(t.baseUrl, 'mia');
    expect(first.session.workspace_id).toBe(t.server.bootstrap.workspaceId);
    await owner.post('/v1/workspaces/team-a/members', { users: [{ id: first.user.id, role: 'manager' }] });

    // Opened for team-a, where mia is a manager: she can invite members there.
    const inTeamA = await oidcSession(t.baseUrl, 'mia', { workspace: 'team-a' });
    expect(inTeamA.session.workspace_id).toBe(teamA.id);
    const asManager = apiClient(t.baseUrl, inTeamA.session_token);
    const invited = await asManager.post('/v1/invites', {
      email: 'olive@example.test',
      role: 'member',
      workspaces: [{ id: 'team-a', role: 'member' }],
    });
    expect(invited.status, JSON.stringify(invited.body)).toBe(200);
    // Her first session acts in the default workspace, where she is a member.
    expect((await apiClient(t.baseUrl, first.session_token).get('/v1/workspaces/team-a')).status).toBe(403);

    // Promoted to organisation admin: the same session now administers the organisation.
    expect((await owner.put(`/v1/users/${first.user.id}`, { role: 'admin' })).status).toBe(200);
    expect((await apiClient(t.baseUrl, first.session_token).get('/v1/settings/security')).status).toBe(200);
    await owner.put(`/v1/users/${first.user.id}`, { role: 'member' });

    // Removed from team-a: the session opened for it stops, with the reason.
    await owner.delete(`/v1/workspaces/team-a/members/${first.user.id}`);
    const gone = await refusal(inTeamA.session_token, t.baseUrl);
    expect(gone).toMatchObject({ status: 403, code: 'WORKSPACE_FORBIDDEN' });
    expect(gone.message).toMatch(/no longer a member/);

    // A workspace one is not a member of cannot be asked for.
    const { back } = await oidcSignIn(t.baseUrl, 'noah', { workspace: 'team-a' });
    expect(back.searchParams.get('error_code')).toBe('WORKSPACE_FORBIDDEN');
  });
});
