import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { createBrowser, type Browser } from '../helpers/browser.js';
import { apiClient } from '../helpers/http.js';
import { postedForm, startSamlIdp, type TestSamlIdp } from '../helpers/saml-idp.js';
import { selfSignedCertificate } from '../helpers/self-signed-cert.js';
import { atLoopback, exchangeCode, pkcePair, startUrl } from '../helpers/sso.js';
import { startTestServer } from '../helpers/start-test-server.js';

const SP_ENTITY_ID = 'urn:svcgw:test-sp';

async function setUp() {
  const t = await startTestServer({ clock: createManualClock(Date.now()) });
  const owner = apiClient(t.baseUrl, t.adminKey);
  const idp = await startSamlIdp({
    spMetadata: async () => (await fetch(`${t.baseUrl}/v1/sso/saml/metadata`)).text(),
  });
  const configured = await owner.put('/v1/settings/sso', {
    saml: {
      entry_point: idp.entryPoint,
      idp_cert: idp.certificate,
      sp_entity_id: SP_ENTITY_ID,
      idp_issuer: idp.entityId,
    },
  });
  expect(configured.status, JSON.stringify(configured.body)).toBe(200);
  return { t, owner, idp, settings: configured.body };
}

/**
 * A browser signing in through the IdP: svcgw's start, the IdP's auto-submitting form (which
 * `alter` may change before it is posted), then the post to svcgw's assertion consumer service.
 */
async function samlSignIn(
  baseUrl: string,
  options: { alter?: (fields: Record<string, string>) => void; browser?: Browser } = {},
) {
  const { verifier, challenge } = pkcePair();
  const browser = options.browser ?? createBrowser();
  let posted: Record<string, string> = {};
  const back = await browser.follow(
    startUrl(baseUrl, '/v1/sso/saml/start', { challenge, state: 'saml-state' }),
    atLoopback,
    (_url, html) => {
      const { action, fields } = postedForm(html);
      options.alter?.(fields);
      posted = fields;
      return { url: new URL(action), form: fields };
    },
  );
  return { back, verifier, posted };
}

/** The posted response's XML, changed by `edit`, encoded again. */
function tamper(fields: Record<string, string>, edit: (xml: string) => string): void {
  const xml = Buffer.from(fields.SAMLResponse!, 'base64').toString('utf8');
  const changed = edit(xml);
  expect(changed).not.toBe(xml);
  fields.SAMLResponse = Buffer.from(changed, 'utf8').toString('base64');
}

const setNext = (idp: TestSamlIdp, email: string, signAssertion = true) => {
  idp.next = { email, signAssertion };
};

describe('single sign-on with SAML 2.0 (node-saml as the service provider, samlify as the IdP)', () => {
  it('publishes its metadata, and signs a user in with a signed assertion through the whole flow', async () => {
    const { t, owner, idp, settings } = await setUp();
    expect(settings.saml).toMatchObject({
      entry_point: idp.entryPoint,
      sp_entity_id: SP_ENTITY_ID,
      acs_url: `${t.baseUrl}/v1/sso/saml/acs`,
      metadata_url: `${t.baseUrl}/v1/sso/saml/metadata`,
    });
    expect(settings.saml.idp_cert_fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);

    const metadata = await fetch(`${t.baseUrl}/v1/sso/saml/metadata`);
    expect(metadata.headers.get('content-type')).toMatch(/^application\/samlmetadata\+xml/);
    const xml = await metadata.text();
    expect(xml).toContain(`entityID="${SP_ENTITY_ID}"`);
    expect(xml).toContain(`Location="${t.baseUrl}/v1/sso/saml/acs"`);
    expect(xml).toContain('WantAssertionsSigned="true"');

    setNext(idp, 'Carol@Example.test');
    const { back, verifier } = await samlSignIn(t.baseUrl);
    expect(back.searchParams.get('state')).toBe('saml-state');
    expect(idp.requests).toHaveLength(1);
    const signedIn = await exchangeCode(t.baseUrl, back, verifier);
    expect(signedIn.user).toMatchObject({
      email: 'carol@example.test',
      role: 'member',
      workspace_ids: [t.server.bootstrap.workspaceId],
    });
    expect(signedIn.session).toMatchObject({ identity_provider: 'saml', subject: 'Carol@Example.test' });
    const carol = apiClient(t.baseUrl, signedIn.session_token);
    expect((await carol.get('/v1/workspaces/default')).status).toBe(200);
    expect((await owner.get(`/v1/sessions?user_id=${signedIn.user.id}`)).body.total).toBe(1);
  });

  it('accepts the pending invite of a first-time user: their role comes from it', async () => {
    const { t, owner, idp } = await setUp();
    const invite = await owner.post('/v1/invites', { email: 'dana@example.test', role: 'admin' });
    setNext(idp, 'dana@example.test');
    const { back, verifier } = await samlSignIn(t.baseUrl);
    const signedIn = await exchangeCode(t.baseUrl, back, verifier);
    expect(signedIn.user).toMatchObject({ email: 'dana@example.test', role: 'admin' });
    expect((await owner.get(`/v1/invites/${invite.body.id}`)).body.status).toBe('accepted');
    // An organisation admin's session administers the organisation.
    expect((await apiClient(t.baseUrl, signedIn.session_token).get('/v1/settings/sso')).status).toBe(200);
  });

  it('refuses a tampered assertion, an unsigned one, one signed by another key, and a replay', async () => {
    const { t, owner, idp } = await setUp();
    const refused = (back: URL) => ({
      code: back.searchParams.get('code'),
      error: back.searchParams.get('error'),
      error_code: back.searchParams.get('error_code'),
      description: back.searchParams.get('error_description') ?? '',
    });

    // The signed assertion says erin; the browser changes it to the owner's address.
    setNext(idp, 'erin@example.test');
    const altered = await samlSignIn(t.baseUrl, {
      alter: (fields) => tamper(fields, (xml) => xml.replaceAll('erin@example.test', 'owner@svcgw.local')),
    });
    expect(refused(altered.back)).toMatchObject({ code: null, error: 'access_denied', error_code: 'SSO_LOGIN_FAILED' });
    expect(refused(altered.back).description).toMatch(/signature/i);

    // A response signed as a whole, around an assertion that is not signed itself.
    setNext(idp, 'erin@example.test', false);
    const unsigned = await samlSignIn(t.baseUrl);
    expect(refused(unsigned.back)).toMatchObject({ code: null, error_code: 'SSO_LOGIN_FAILED' });
    expect(refused(unsigned.back).description).toMatch(/signature/i);

    // The stored certificate is another one: nothing the IdP signs verifies.
    await owner.put('/v1/settings/sso', {
      saml: { entry_point: idp.entryPoint, idp_cert: selfSignedCertificate().certificate, sp_entity_id: SP_ENTITY_ID },
    });
    setNext(idp, 'erin@example.test');
    const otherKey = await samlSignIn(t.baseUrl);
    expect(refused(otherKey.back).error_code).toBe('SSO_LOGIN_FAILED');
    expect((await owner.get('/v1/users?email=erin@example.test')).body.total).toBe(0);
    expect((await owner.get('/v1/users?email=owner@svcgw.local')).body.data[0].role).toBe('owner');

    // A valid response works once; posted again, it is refused.
    await owner.put('/v1/settings/sso', {
      saml: { entry_point: idp.entryPoint, idp_cert: idp.certificate, sp_entity_id: SP_ENTITY_ID },
    });
    const first = await samlSignIn(t.baseUrl);
    await exchangeCode(t.baseUrl, first.back, first.verifier);
    const replay = await createBrowser().request(new URL(`${t.baseUrl}/v1/sso/saml/acs`), {
      method: 'POST',
      form: first.posted,
    });
    expect(replay.status).toBe(303);
    const replayed = new URL(replay.headers.get('location')!);
    expect(refused(replayed)).toMatchObject({ code: null, error_code: 'SSO_LOGIN_FAILED' });
    expect(refused(replayed).description).toMatch(/already answered/);

    // A response to no login under way here.
    const stray = await createBrowser().request(new URL(`${t.baseUrl}/v1/sso/saml/acs`), {
      method: 'POST',
      form: { SAMLResponse: first.posted.SAMLResponse!, RelayState: 'not-a-login' },
    });
    expect(stray.status).toBe(401);
    expect(((await stray.json()) as any).error.code).toBe('SSO_LOGIN_FAILED');
    // Not XML at all, for a login under way: refused, not a server error.
    const garbage = await samlSignIn(t.baseUrl, {
      alter: (fields) => (fields.SAMLResponse = Buffer.from('<not xml').toString('base64')),
    });
    expect(refused(garbage.back)).toMatchObject({ code: null, error_code: 'SSO_LOGIN_FAILED' });
  });

  it('checks the SAML settings', async () => {
    const t = await startTestServer();
    const owner = apiClient(t.baseUrl, t.adminKey);
    const badCert = await owner.put('/v1/settings/sso', {
      saml: { entry_point: 'https://idp.example.com/sso', idp_cert: 'not a certificate', sp_entity_id: SP_ENTITY_ID },
    });
    expect([badCert.status, badCert.body.error.param]).toEqual([400, 'saml.idp_cert']);
    const badEntry = await owner.put('/v1/settings/sso', {
      saml: {
        entry_point: 'http://idp.example.com/sso',
        idp_cert: selfSignedCertificate().certificate,
        sp_entity_id: SP_ENTITY_ID,
      },
    });
    expect([badEntry.status, badEntry.body.error.param]).toEqual([400, 'saml.entry_point']);
    const metadata = await apiClient(t.baseUrl).get('/v1/sso/saml/metadata');
    expect([metadata.status, metadata.body.error.code]).toEqual([400, 'SSO_NOT_CONFIGURED']);
  });
});
