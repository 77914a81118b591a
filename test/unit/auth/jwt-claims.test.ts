import { exportJWK, generateKeyPair, SignJWT, type JWTVerifyGetKey } from 'jose';
import { describe, expect, it } from 'vitest';
import { jwtCallerId } from '../../../src/auth/jwt/caller-id.js';
import { grantedScopes, jwtLacksScope, readIdentity } from '../../../src/auth/jwt/claims.js';
import { createJwksCache, JwksUnavailableError } from '../../../src/auth/jwt/jwks-cache.js';
import { jwtSettingsInput } from '../../../src/auth/jwt/settings.js';
import { looksLikeJwt } from '../../../src/auth/jwt/token-shape.js';
import { createManualClock } from '../../../src/lib/clock.js';

const claims = jwtSettingsInput.parse({ jwks_url: 'https://idp.test/jwks', issuer: 'i', audience: null }).claims;

describe('JWT claim mapping', () => {
  it('reads user, e-mail, workspace and scopes through the default claim names', () => {
    expect(
      readIdentity(
        {
          sub: 'alice',
          email_id: 'Alice@Example.test',
          workspace_id: 'ws-1',
          scope: 'completions.write  logs.list openid',
        },
        claims,
      ),
    ).toEqual({
      subject: 'alice',
      email: 'Alice@Example.test',
      workspace: 'ws-1',
      organisation: null,
      claimedScopes: ['completions.write', 'logs.list', 'openid'],
      scopes: new Set(['completions.write', 'logs.list']),
    });
    // The first name present wins; arrays of scopes are taken as they are.
    const both = readIdentity(
      { sub: 'a', workspace_slug: 'first', workspace_id: 'second', scopes: ['configs.read'] },
      claims,
    );
    expect(both).toMatchObject({ workspace: 'first', email: null, scopes: new Set(['configs.read']) });
  });

  it('follows configured claim names, taken literally (namespaced URLs included)', () => {
    const custom = { ...claims, workspace: ['https://acme.test/tenant'], scopes: ['permissions'], user: ['oid'] };
    expect(
      readIdentity({ oid: 'u-9', 'https://acme.test/tenant': 'team-a', permissions: ['logs.view'] }, custom),
    ).toMatchObject({ subject: 'u-9', workspace: 'team-a', scopes: new Set(['logs.view']) });
    expect(readIdentity({ sub: 'u-9', workspace_slug: 'team-a', scope: 'x' }, custom)).toEqual({
      reason: 'missing_claim',
      message: 'The token has no user claim ("oid").',
    });
  });

  it('says which claim is missing or malformed', () => {
    expect(readIdentity({ sub: 'a', scope: 'x' }, claims)).toEqual({
      reason: 'missing_claim',
      message: 'The token has no workspace claim ("workspace_slug" or "workspace_id").',
    });
    expect(readIdentity({ sub: 'a', workspace_slug: 'w' }, claims)).toMatchObject({
      reason: 'missing_claim',
      message: expect.stringContaining('no scopes claim ("scope" or "scopes")'),
    });
    expect(readIdentity({ sub: 7 as unknown as string, workspace_slug: 'w', scope: 'x' }, claims)).toMatchObject({
      reason: 'invalid_claim',
      message: expect.stringContaining('"sub" claim (user) must be a non-empty string'),
    });
    expect(readIdentity({ sub: 'a', workspace_slug: 'w', scopes: ['ok', 3] }, claims)).toMatchObject({
      reason: 'invalid_claim',
      message: expect.stringContaining('"scopes" claim (scopes)'),
    });
    expect(readIdentity({ sub: 'a', workspace_slug: 'w'.repeat(256), scope: 'x' }, claims)).toMatchObject({
      reason: 'invalid_claim',
    });
  });

  it('grants the data plane and, on the control plane, only reading and listing within a workspace', () => {
    expect([
      ...grantedScopes([
        'completions.write',
        'mcp.invoke',
        'configs.read',
        'configs.list',
        'logs.view',
        'analytics.view',
        'configs.create',
        'logs.export',
        'feedback.create',
        'workspaces.list',
        'audit_logs.list',
        'organisations.read',
        'openid',
      ]),
    ]).toEqual(['completions.write', 'mcp.invoke', 'configs.read', 'configs.list', 'logs.view', 'analytics.view']);
    expect(jwtLacksScope('configs.list')).toBe('The JWT lacks the scope configs.list.');
    expect(jwtLacksScope('configs.update')).toMatch(/only read and list scopes/);
  });
});

describe('JWT shape and caller id', () => {
  it('tells a JWT from svcgw keys and provider keys', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const token = await new SignJWT({ sub: 'a' }).setProtectedHeader({ alg: 'ES256' }).sign(privateKey);
    expect(looksLikeJwt(token)).toBe(true);
    expect(looksLikeJwt('svc-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg')).toBe(false);
    expect(looksLikeJwt('sk-proj-abc.def.ghi')).toBe(false);
    expect(looksLikeJwt('my.bootstrap.key-that-has-dots-0123456789')).toBe(false);
    const noAlg = `${Buffer.from('{"typ":"JWT"}').toString('base64url')}.e30.c2ln`;
    expect(looksLikeJwt(noAlg)).toBe(false);
  });

  it('gives one user one stable UUID per organisation and issuer', () => {
    const org = '7d8f3f1e-2a4b-4c5d-8e9f-0a1b2c3d4e5f';
    const id = jwtCallerId(org, 'https://idp/', 'alice');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(jwtCallerId(org, 'https://idp/', 'alice')).toBe(id);
    expect(jwtCallerId(org, 'https://idp/', 'bob')).not.toBe(id);
    expect(jwtCallerId(org, 'https://other/', 'alice')).not.toBe(id);
    expect(jwtCallerId('00000000-0000-4000-8000-000000000000', 'https://idp/', 'alice')).not.toBe(id);
  });
});

describe('JWKS cache', () => {
  async function keySet(kids: string[]) {
    const pairs = await Promise.all(kids.map(async (kid) => ({ kid, ...(await generateKeyPair('RS256')) })));
    return {
      document: {
        keys: await Promise.all(
          pairs.map(async (p) => ({ ...(await exportJWK(p.publicKey)), kid: p.kid, alg: 'RS256' })),
        ),
      },
    };
  }
  const resolve = (keys: JWTVerifyGetKey, kid: string) => keys({ alg: 'RS256', kid }, { payload: '', signature: '' });

  it('fetches once, again when the keys are old or a kid is unknown (after the cooldown), and keeps old keys when the IdP is down', async () => {
    const clock = createManualClock();
    const first = await keySet(['k1']);
    const second = await keySet(['k2']);
    let served: unknown = first.document;
    let fetches = 0;
    const stale: string[] = [];
    const cache = createJwksCache({
      clock,
      fetchJwks: async () => {
        fetches++;
        if (served instanceof Error) throw served;
        return served;
      },
      onStale: (_url, reason) => stale.push(reason),
    });
    const keys = cache.keysFor('https://idp/jwks', 600_000);
    await resolve(keys, 'k1');
    await resolve(keys, 'k1');
    expect(fetches).toBe(1);

    served = second.document;
    await expect(resolve(keys, 'k2')).rejects.toThrow(/no applicable key/i);
    expect(fetches).toBe(1); // within the cooldown
    clock.advance(30_000);
    await resolve(keys, 'k2');
    expect(fetches).toBe(2);

    served = new Error('connect ECONNREFUSED');
    clock.advance(600_000);
    await resolve(keys, 'k2'); // due, fetch fails, the keys at hand still verify
    expect(fetches).toBe(3);
    expect(stale).toEqual(['the JWKS could not be fetched: connect ECONNREFUSED']);
    await resolve(keys, 'k2');
    expect(fetches).toBe(3); // failures wait out the cooldown too

    const empty = createJwksCache({ clock, fetchJwks: async () => ({ keys: 'nope' }) });
    await expect(resolve(empty.keysFor('https://idp/jwks', 600_000), 'k1')).rejects.toThrow(JwksUnavailableError);
  });
});
