import { createServer } from 'node:http';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { describe, expect, it, onTestFinished } from 'vitest';
import { checkParameterProblem } from '../../../src/guardrails/registry.js';
import { listenOnLoopback } from '../../helpers/loopback-server.js';
import { chatContext, runOne } from './context.js';

const server = { allowPrivateContentUrls: false, allowPrivateCheckEndpoints: true };

async function startJwks() {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  let fetches = 0;
  const s = await listenOnLoopback(
    createServer((_req, res) => {
      fetches++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    }),
  );
  onTestFinished(() => s.close());
  return { jwksUri: `${s.url}/.well-known/jwks.json`, privateKey, fetches: () => fetches };
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

async function token(key: Parameters<SignJWT['sign']>[0], claims: { iat: number; exp: number }) {
  return new SignJWT({ scope: 'chat' })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setSubject('user-7')
    .setIssuedAt(claims.iat)
    .setExpirationTime(claims.exp)
    .sign(key);
}

const withAuth = (value: string) =>
  chatContext('hi', { server, request: { json: { model: 'm', messages: [] }, headers: { authorization: value } } });

describe('default.jwt', () => {
  it('passes a valid token and fails an expired one or one signed by another key', async () => {
    const jwks = await startJwks();
    const parameters = { jwksUri: jwks.jwksUri, headerKey: 'Authorization' };
    const valid = await token(jwks.privateKey, { iat: nowSeconds() - 60, exp: nowSeconds() + 3600 });
    expect(await runOne('default.jwt', parameters, withAuth(`Bearer ${valid}`))).toMatchObject({
      verdict: true,
      data: { sub: 'user-7' },
    });

    const expired = await token(jwks.privateKey, { iat: nowSeconds() - 7200, exp: nowSeconds() - 3600 });
    const old = await runOne('default.jwt', parameters, withAuth(`Bearer ${expired}`));
    expect(old).toMatchObject({ verdict: false, data: { reason: 'ERR_JWT_EXPIRED' } });

    const other = await generateKeyPair('RS256');
    const forged = await token(other.privateKey, { iat: nowSeconds() - 60, exp: nowSeconds() + 3600 });
    expect(await runOne('default.jwt', parameters, withAuth(`Bearer ${forged}`))).toMatchObject({
      verdict: false,
      data: { reason: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' },
    });
    expect(jwks.fetches()).toBe(1); // the key set is cached
  });

  it('fails a missing header and a token older than maxTokenAge', async () => {
    const jwks = await startJwks();
    const missing = await runOne(
      'default.jwt',
      { jwksUri: jwks.jwksUri, headerKey: 'x-user-token' },
      withAuth('Bearer x'),
    );
    expect(missing).toMatchObject({ verdict: false, explanation: 'The x-user-token header is missing.' });
    const aged = await token(jwks.privateKey, { iat: nowSeconds() - 7200, exp: nowSeconds() + 3600 });
    const result = await runOne(
      'default.jwt',
      { jwksUri: jwks.jwksUri, headerKey: 'authorization', maxTokenAge: '1h' },
      withAuth(aged),
    );
    expect(result.verdict).toBe(false);
    expect(result.explanation).toMatch(/"iat" claim timestamp check failed/);
  });

  it('fails closed when the key set cannot be fetched (a private host without the setting)', async () => {
    const jwks = await startJwks();
    const valid = await token(jwks.privateKey, { iat: nowSeconds() - 60, exp: nowSeconds() + 3600 });
    const context = {
      ...withAuth(`Bearer ${valid}`),
      server: { allowPrivateContentUrls: false, allowPrivateCheckEndpoints: false },
    };
    const result = await runOne(
      'default.jwt',
      { jwksUri: `${jwks.jwksUri}?closed`, headerKey: 'authorization' },
      context,
    );
    expect(result.verdict).toBe(false);
    expect(result.error).toMatch(/^jwt: /);
    expect(jwks.fetches()).toBe(0);
  });

  it('validates its parameters', () => {
    expect(checkParameterProblem('default.jwt', { headerKey: 'a' })).toMatchObject({ param: 'jwksUri' });
    expect(checkParameterProblem('default.jwt', { jwksUri: 'ftp://x', headerKey: 'a' })).toMatchObject({
      param: 'jwksUri',
    });
    expect(
      checkParameterProblem('default.jwt', { jwksUri: 'https://x.example/jwks', headerKey: 'a', algorithms: ['none'] }),
    ).toMatchObject({
      param: 'algorithms.0',
    });
    expect(
      checkParameterProblem('default.jwt', { jwksUri: 'https://x.example/jwks', headerKey: 'a', maxTokenAge: 'soon' }),
    ).toMatchObject({
      param: 'maxTokenAge',
    });
    // The reference's own example.
    expect(
      checkParameterProblem('default.jwt', {
        jwksUri: 'https://example.com/.well-known/jwks.json',
        headerKey: 'Authorization',
        algorithms: ['RS256'],
        cacheMaxAge: 86400,
        clockTolerance: 5,
        maxTokenAge: '1d',
      }),
    ).toBeNull();
  });
});
