import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback-server.js';

export interface VaultCall {
  method: string;
  path: string;
  status: number;
  /** The token's label (root token name, `approle:<role_id>`, `kubernetes:<role>`), null without a valid one. */
  token: string | null;
  namespace: string | null;
}

/**
 * A stand-in for HashiCorp Vault on 127.0.0.1 that speaks its HTTP API as node-vault calls it:
 * KV version 2 (`GET|POST /v1/<mount>/data/<path>`), AppRole login (`POST
 * /v1/auth/approle/login` with role_id and secret_id) and Kubernetes login (`POST
 * /v1/auth/kubernetes/login` with role and the service-account JWT). Every KV call must carry an
 * `X-Vault-Token` the mock issued or was given; a namespace, when a token is bound to one, must
 * come as `X-Vault-Namespace`. Errors are Vault's `{"errors": [...]}`.
 */
export async function startMockVault() {
  const tokens = new Map<string, { label: string; namespace: string | null }>();
  const approles = new Map<string, { secretId: string; namespace: string | null }>();
  const kubernetesRoles = new Map<string, { jwt: string; namespace: string | null }>();
  const kv = new Map<string, { data: Record<string, unknown>; version: number }>();
  const calls: VaultCall[] = [];
  let leaseSeconds = 3600;

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const issue = (label: string, namespace: string | null) => {
    const token = `hvs.${randomBytes(18).toString('base64url')}`;
    tokens.set(token, { label, namespace });
    return {
      request_id: randomUUID(),
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      data: null,
      wrap_info: null,
      warnings: null,
      auth: {
        client_token: token,
        accessor: randomBytes(12).toString('base64url'),
        policies: ['default', 'svcgw-read'],
        token_policies: ['default', 'svcgw-read'],
        metadata: {},
        lease_duration: leaseSeconds,
        renewable: true,
        entity_id: randomUUID(),
        token_type: 'service',
        orphan: true,
      },
    };
  };

  function handle(req: IncomingMessage, res: ServerResponse, body: string) {
    const path = (req.url ?? '/').split('?')[0]!;
    const namespace = typeof req.headers['x-vault-namespace'] === 'string' ? req.headers['x-vault-namespace'] : null;
    const input = body ? (JSON.parse(body) as Record<string, unknown>) : {};
    const record = (status: number, token: string | null) =>
      calls.push({ method: req.method ?? 'GET', path, status, token, namespace });

    const login = /^\/v1\/auth\/([^/]+)\/login$/.exec(path);
    if (login && req.method === 'POST') {
      const mount = login[1]!;
      if (mount.startsWith('approle')) {
        const role = approles.get(String(input.role_id));
        if (!role || role.secretId !== input.secret_id || role.namespace !== namespace) {
          record(400, null);
          return send(res, 400, { errors: ['invalid role or secret ID'] });
        }
        record(200, null);
        return send(res, 200, issue(`approle:${String(input.role_id)}`, namespace));
      }
      if (mount.startsWith('kubernetes')) {
        const role = kubernetesRoles.get(String(input.role));
        if (!role || role.jwt !== input.jwt || role.namespace !== namespace) {
          record(403, null);
          return send(res, 403, { errors: ['permission denied'] });
        }
        record(200, null);
        return send(res, 200, issue(`kubernetes:${String(input.role)}`, namespace));
      }
    }

    const kvPath = /^\/v1\/([^/]+)\/data\/(.+)$/.exec(path);
    const token = tokens.get(String(req.headers['x-vault-token'] ?? ''));
    if (!token || token.namespace !== namespace) {
      record(403, null);
      return send(res, 403, { errors: ['permission denied'] });
    }
    if (!kvPath) {
      record(404, token.label);
      return send(res, 404, { errors: [] });
    }
    const key = `${kvPath[1]}/${kvPath[2]}`;
    if (req.method === 'GET') {
      const entry = kv.get(key);
      if (!entry) {
        record(404, token.label);
        return send(res, 404, { errors: [] });
      }
      record(200, token.label);
      return send(res, 200, {
        request_id: randomUUID(),
        lease_id: '',
        renewable: false,
        lease_duration: 0,
        data: {
          data: entry.data,
          metadata: {
            created_time: new Date().toISOString(),
            custom_metadata: null,
            deletion_time: '',
            destroyed: false,
            version: entry.version,
          },
        },
        wrap_info: null,
        warnings: null,
        auth: null,
      });
    }
    if (req.method === 'POST' || req.method === 'PUT') {
      const data = input.data;
      if (typeof data !== 'object' || data === null) {
        record(400, token.label);
        return send(res, 400, { errors: ['no data provided'] });
      }
      const version = (kv.get(key)?.version ?? 0) + 1;
      kv.set(key, { data: data as Record<string, unknown>, version });
      record(200, token.label);
      return send(res, 200, {
        request_id: randomUUID(),
        data: { created_time: new Date().toISOString(), deletion_time: '', destroyed: false, version },
      });
    }
    record(405, token.label);
    return send(res, 405, { errors: ['unsupported operation'] });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        handle(req, res, Buffer.concat(chunks).toString('utf8'));
      } catch (error) {
        send(res, 500, { errors: [String(error)] });
      }
    });
  });
  const listening = await listenOnLoopback(server);
  return {
    url: listening.url,
    calls,
    /** A token the mock accepts as it is (as one made with `vault token create`). */
    addToken(label: string, namespace: string | null = null) {
      const token = `hvs.${randomBytes(18).toString('base64url')}`;
      tokens.set(token, { label, namespace });
      return token;
    },
    addAppRole(roleId: string, secretId: string, namespace: string | null = null) {
      approles.set(roleId, { secretId, namespace });
    },
    addKubernetesRole(role: string, jwt: string, namespace: string | null = null) {
      kubernetesRoles.set(role, { jwt, namespace });
    },
    /** Revokes every token issued by a login (as their lease ending would). */
    revokeLoginTokens() {
      for (const [token, info] of tokens) if (info.label.includes(':')) tokens.delete(token);
    },
    setLeaseSeconds(seconds: number) {
      leaseSeconds = seconds;
    },
    /** Writes a KV v2 entry at `<mount>/<path>`. */
    put(mountAndPath: string, data: Record<string, unknown>) {
      const [mount, ...rest] = mountAndPath.split('/');
      const key = `${mount}/${rest.join('/')}`;
      kv.set(key, { data, version: (kv.get(key)?.version ?? 0) + 1 });
    },
    get: (mountAndPath: string) => kv.get(mountAndPath)?.data,
    close: () => listening.close(),
  };
}

export type MockVault = Awaited<ReturnType<typeof startMockVault>>;
