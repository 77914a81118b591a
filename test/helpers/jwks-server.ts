import { createServer } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { onTestFinished } from 'vitest';
import { listenOnLoopback } from './loopback-server.js';

type Alg = 'RS256' | 'ES256';

export interface Idp {
  /** The JWKS URL (what `jwks_url` is set to). */
  jwksUrl: string;
  /** How many times the JWKS was fetched. */
  fetches(): number;
  /** Makes a key pair; `publish` puts it in the JWKS (a key is published when made unless told not to). */
  makeKey(kid: string, options?: { alg?: Alg; publish?: boolean }): Promise<void>;
  /** The kids the JWKS serves from now on, in order (rotation). */
  publish(kids: string[]): void;
  /** Answer the JWKS with this status (a broken IdP), or normally again with null. */
  failWith(status: number | null): void;
  /** A token signed with `kid`'s private key, with exactly these claims. */
  sign(kid: string, claims: JWTPayload, header?: Record<string, unknown>): Promise<string>;
}

/**
 * An identity provider on 127.0.0.1 as far as svcgw sees one: a node:http server that publishes
 * a JWKS of jose-generated public keys and can rotate them; it signs tokens with the private keys.
 */
export async function startIdp(): Promise<Idp> {
  const keys = new Map<string, { alg: Alg; privateKey: CryptoKey; jwk: JWK }>();
  let published: string[] = [];
  let fetches = 0;
  let failure: number | null = null;
  const server = await listenOnLoopback(
    createServer((request, response) => {
      if (request.url !== '/.well-known/jwks.json') return void response.writeHead(404).end();
      fetches++;
      if (failure !== null) return void response.writeHead(failure).end('unavailable');
      const body = { keys: published.map((kid) => keys.get(kid)!.jwk) };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    }),
  );
  onTestFinished(() => server.close());

  return {
    jwksUrl: `${server.url}/.well-known/jwks.json`,
    fetches: () => fetches,
    async makeKey(kid, options = {}) {
      const alg = options.alg ?? 'RS256';
      const { publicKey, privateKey } = await generateKeyPair(alg);
      keys.set(kid, { alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } });
      if (options.publish !== false) published.push(kid);
    },
    publish(kids) {
      published = [...kids];
    },
    failWith(status) {
      failure = status;
    },
    async sign(kid, claims, header = {}) {
      const key = keys.get(kid)!;
      return new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid, typ: 'JWT', ...header }).sign(key.privateKey);
    },
  };
}
