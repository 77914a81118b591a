import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import { listenOnLoopback } from './loopback-server.js';
import { selfSignedTlsCertificate } from './tls-certificate.js';

export interface AzureCall {
  /** `openid-configuration`, `token` (Entra), `managed-identity`, `get-secret`, `set-secret`. */
  kind: string;
  status: number;
  /** Who the call's token or credentials stand for (`app:<client id>`, `managed:<client id>`), when known. */
  identity: string | null;
  /** Key Vault calls: whether the Authorization header was there (the first call of a challenge has none). */
  bearer: boolean;
  detail: Record<string, string>;
}

/** The resource Key Vault names in its sign-in challenge (public cloud). */
export const KEY_VAULT_RESOURCE = 'https://vault.azure.net';

/**
 * A stand-in for Azure on 127.0.0.1, over https (Azure's libraries refuse plain http), with a
 * certificate made for the test: Key Vault's secrets REST API (`GET|PUT
 * /secrets/{name}?api-version=…`) with its challenge-based sign-in (a request without a token
 * gets 401 and `WWW-Authenticate: Bearer authorization="<authority>/<tenant>",
 * resource="https://vault.azure.net"`), Microsoft Entra (OpenID configuration and the
 * client-credentials token endpoint, checking tenant, client id, secret and scope), and the App
 * Service managed identity endpoint (checking `X-IDENTITY-HEADER`). Key Vault accepts only
 * tokens this mock issued for its resource.
 */
export async function startMockAzure(options: { tenant: string }) {
  const { key, cert } = selfSignedTlsCertificate();
  const apps = new Map<string, string>();
  const managedIdentities = new Set<string>();
  let identityHeader: string | null = null;
  const tokens = new Map<string, { resource: string; identity: string }>();
  const secrets = new Map<string, { value: string; version: string }>();
  const calls: AzureCall[] = [];
  let url = '';

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(JSON.stringify(body));
  };
  const issue = (resource: string, identity: string) => {
    const token = `eyJ0eXAiOiJKV1Qi.${randomBytes(24).toString('base64url')}.${randomBytes(16).toString('base64url')}`;
    tokens.set(token, { resource, identity });
    return token;
  };
  const bundle = (name: string) => ({
    value: secrets.get(name)!.value,
    id: `${url}/secrets/${name}/${secrets.get(name)!.version}`,
    attributes: { enabled: true, created: 1767225600, updated: 1767225600, recoveryLevel: 'Recoverable+Purgeable' },
    tags: {},
  });

  function entra(req: IncomingMessage, res: ServerResponse, path: string, body: string): boolean {
    const config = /^\/([^/]+)\/v2\.0\/\.well-known\/openid-configuration$/.exec(path);
    if (config && req.method === 'GET') {
      const tenant = config[1]!;
      calls.push({ kind: 'openid-configuration', status: 200, identity: null, bearer: false, detail: { tenant } });
      send(res, 200, {
        token_endpoint: `${url}/${tenant}/oauth2/v2.0/token`,
        authorization_endpoint: `${url}/${tenant}/oauth2/v2.0/authorize`,
        issuer: `${url}/${tenant}/v2.0`,
        jwks_uri: `${url}/${tenant}/discovery/v2.0/keys`,
        end_session_endpoint: `${url}/${tenant}/oauth2/v2.0/logout`,
        response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
        subject_types_supported: ['pairwise'],
        id_token_signing_alg_values_supported: ['RS256'],
        token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
        scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
      });
      return true;
    }
    const token = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(path);
    if (token && req.method === 'POST') {
      const form = Object.fromEntries(new URLSearchParams(body));
      const clientId = form.client_id ?? '';
      const ok =
        token[1] === options.tenant &&
        form.grant_type === 'client_credentials' &&
        apps.has(clientId) &&
        apps.get(clientId) === form.client_secret;
      const scope = form.scope?.split(' ').find((s) => s.endsWith('/.default')) ?? '';
      calls.push({
        kind: 'token',
        status: ok ? 200 : 401,
        identity: ok ? `app:${clientId}` : null,
        bearer: false,
        detail: { tenant: token[1]!, client_id: clientId, scope, grant_type: form.grant_type ?? '' },
      });
      if (!ok) {
        send(res, 401, {
          error: 'invalid_client',
          error_description: `AADSTS7000215: Invalid client secret provided. Trace ID: ${randomUUID()}`,
          error_codes: [7000215],
        });
        return true;
      }
      send(res, 200, {
        token_type: 'Bearer',
        expires_in: 3599,
        ext_expires_in: 3599,
        access_token: issue(scope.replace(/\/\.default$/, ''), `app:${clientId}`),
      });
      return true;
    }
    return false;
  }

  /** App Service's managed identity endpoint (api-version 2019-08-01), as IDENTITY_ENDPOINT names it. */
  function managed(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): boolean {
    if (path !== '/msi/token' || req.method !== 'GET') return false;
    const clientId = query.get('client_id') ?? 'system';
    const ok =
      identityHeader !== null &&
      req.headers['x-identity-header'] === identityHeader &&
      query.get('api-version') === '2019-08-01' &&
      managedIdentities.has(clientId);
    const resource = query.get('resource') ?? '';
    calls.push({
      kind: 'managed-identity',
      status: ok ? 200 : 400,
      identity: ok ? `managed:${clientId}` : null,
      bearer: false,
      detail: { resource, client_id: clientId },
    });
    if (!ok) {
      send(res, 400, { statusCode: 400, message: 'No managed identity found for the specified identity' });
      return true;
    }
    send(res, 200, {
      access_token: issue(resource, `managed:${clientId}`),
      expires_on: String(Math.floor(Date.now() / 1000) + 3600),
      resource,
      token_type: 'Bearer',
      client_id: clientId,
    });
    return true;
  }

  function keyVault(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, body: string) {
    const match = /^\/secrets\/([0-9a-zA-Z-]+)\/?$/.exec(path);
    const name = match?.[1] ?? '';
    const kind = req.method === 'PUT' ? 'set-secret' : 'get-secret';
    const auth = String(req.headers.authorization ?? '');
    const granted = auth.startsWith('Bearer ') ? tokens.get(auth.slice('Bearer '.length)) : undefined;
    const record = (status: number) =>
      calls.push({
        kind,
        status,
        identity: granted?.identity ?? null,
        bearer: auth !== '',
        detail: { name, 'api-version': query.get('api-version') ?? '' },
      });
    if (!granted || granted.resource !== KEY_VAULT_RESOURCE) {
      record(401);
      return send(
        res,
        401,
        { error: { code: 'Unauthorized', message: 'AKV10000: Request is missing a Bearer or PoP token.' } },
        {
          'www-authenticate': `Bearer authorization="${url}/${options.tenant}", resource="${KEY_VAULT_RESOURCE}"`,
        },
      );
    }
    if (!match || !query.get('api-version')) {
      record(400);
      return send(res, 400, { error: { code: 'BadParameter', message: 'The request URI is not valid.' } });
    }
    if (req.method === 'PUT') {
      const input = JSON.parse(body || '{}') as { value?: unknown };
      if (typeof input.value !== 'string') {
        record(400);
        return send(res, 400, { error: { code: 'BadParameter', message: 'Property value is required.' } });
      }
      secrets.set(name, { value: input.value, version: randomBytes(16).toString('hex') });
      record(200);
      return send(res, 200, bundle(name));
    }
    if (!secrets.has(name)) {
      record(404);
      return send(res, 404, {
        error: { code: 'SecretNotFound', message: `A secret with (name/id) ${name} was not found in this key vault.` },
      });
    }
    record(200);
    return send(res, 200, bundle(name));
  }

  const server = createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const [path = '/', search = ''] = (req.url ?? '/').split('?');
      const query = new URLSearchParams(search);
      try {
        if (entra(req, res, path, body) || managed(req, res, path, query)) return;
        keyVault(req, res, path, query, body);
      } catch (error) {
        send(res, 500, { error: { code: 'InternalError', message: String(error) } });
      }
    });
  });
  const listening = await listenOnLoopback(server);
  url = listening.url.replace('http://', 'https://');
  return {
    url,
    /** The certificate to trust (PEM). */
    cert,
    calls,
    /** An app registration in the tenant, for client-credentials sign-in. */
    addApp(clientId: string, clientSecret: string) {
      apps.set(clientId, clientSecret);
    },
    /** A managed identity (`system` for the system-assigned one) served to callers sending `header`. */
    addManagedIdentity(clientId: string, header: string) {
      managedIdentities.add(clientId);
      identityHeader = header;
    },
    setSecret(name: string, value: string) {
      secrets.set(name, { value, version: randomBytes(16).toString('hex') });
    },
    secret: (name: string) => secrets.get(name)?.value,
    close: () => listening.close(),
  };
}

export type MockAzure = Awaited<ReturnType<typeof startMockAzure>>;
