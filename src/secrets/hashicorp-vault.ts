import { readFile } from 'node:fs/promises';
import createVaultClient from 'node-vault';
import type { VaultAuth } from './auth-config.js';
import { trustedCa, VersionedCache } from './clients.js';
import {
  SecretManagerError,
  type SecretBackend,
  type SecretNetwork,
  type SecretTarget,
  type SecretValue,
} from './types.js';

/** A login's token is renewed this long before its lease ends. */
const RENEW_MARGIN_MS = 60_000;

interface VaultSession {
  client: createVaultClient.client;
  /** When the login's token must be replaced; null: a token given in the reference (never renewed here). */
  expiresAt: number | null;
  login: Promise<void> | null;
}

/**
 * HashiCorp Vault's HTTP API through node-vault: token, AppRole and Kubernetes sign-in, KV
 * version 2 reads and writes. A login's token is kept (per reference version) until its lease
 * is nearly over, or until Vault refuses it.
 */
export function createHashicorpVault(network: SecretNetwork): SecretBackend {
  const sessions = new VersionedCache<VaultSession>();

  function sessionFor(target: SecretTarget): VaultSession {
    return sessions.get(target, () => {
      const auth = target.auth as VaultAuth;
      const client = createVaultClient({
        endpoint: auth.vault_addr,
        ...(auth.vault_namespace ? { namespace: auth.vault_namespace } : {}),
        ...(auth.vault_auth_type === 'token' ? { token: auth.vault_token } : {}),
        requestOptions: {
          timeout: network.timeoutMs,
          ...(network.extraCa ? { ca: trustedCa(network.extraCa) } : {}),
        },
      });
      return { client, expiresAt: auth.vault_auth_type === 'token' ? null : 0, login: null };
    });
  }

  async function login(session: VaultSession, auth: VaultAuth): Promise<void> {
    let answer: { auth?: { lease_duration?: number } };
    if (auth.vault_auth_type === 'approle') {
      answer = (await session.client.approleLogin({
        role_id: auth.vault_role_id,
        secret_id: auth.vault_secret_id,
        mount_point: auth.vault_approle_mount ?? 'approle',
      })) as typeof answer;
    } else if (auth.vault_auth_type === 'kubernetes') {
      // Read at each login: projected service-account tokens are rotated by the kubelet.
      const jwt = (await readFile(network.kubernetesTokenPath, 'utf8')).trim();
      answer = (await session.client.kubernetesLogin({
        role: auth.vault_role,
        jwt,
        // Always named: node-vault's default for this path renders empty (`auth//login`).
        mount_point: auth.vault_kubernetes_mount ?? 'kubernetes',
      })) as typeof answer;
    } else {
      return;
    }
    const leaseMs = (answer.auth?.lease_duration ?? 0) * 1000;
    // A lease of 0 is a token that does not expire.
    session.expiresAt = leaseMs > 0 ? network.now() + Math.max(leaseMs - RENEW_MARGIN_MS, leaseMs / 2) : Infinity;
  }

  /** Signs in when the session has no valid token; concurrent callers share one login. */
  async function signedIn(target: SecretTarget, force = false): Promise<VaultSession> {
    const session = sessionFor(target);
    if (session.expiresAt === null) return session;
    if (force || session.expiresAt <= network.now()) {
      session.login ??= login(session, target.auth as VaultAuth).finally(() => (session.login = null));
      await session.login;
    }
    return session;
  }

  /** Runs a call; a token Vault refuses (expired, revoked) is replaced by one new login and the call tried again. */
  async function withToken<T>(target: SecretTarget, call: (client: createVaultClient.client) => Promise<T>) {
    const session = await signedIn(target);
    try {
      return await call(session.client);
    } catch (error) {
      if (session.expiresAt === null || statusOf(error) !== 403) throw error;
      return call((await signedIn(target, true)).client);
    }
  }

  return {
    async read(target) {
      try {
        const answer = (await withToken(target, (client) => client.read(kvDataPath(target.secretPath)))) as {
          data?: { data?: Record<string, unknown> | null };
        };
        const data = answer.data?.data;
        if (!data) throw new SecretManagerError('not_found', `Vault has no value at ${target.secretPath}.`);
        return data;
      } catch (error) {
        throw failure(error, target, 'read');
      }
    },

    async write(target, value: SecretValue) {
      const data = typeof value === 'string' ? { value } : value;
      try {
        await withToken(target, (client) => client.write(kvDataPath(target.secretPath), { data }));
      } catch (error) {
        throw failure(error, target, 'write');
      }
    },
  };
}

/**
 * The KV version 2 API path of `<mount>/<path>` (`secret/openai` → `secret/data/openai`), as
 * `vault kv get secret/openai` reads it. A path already in API form (`secret/data/openai`) is kept.
 */
export function kvDataPath(secretPath: string): string {
  const [mount, ...rest] = secretPath.replace(/^\/+/, '').split('/');
  if (rest[0] === 'data') return `${mount}/${rest.join('/')}`;
  return `${mount}/data/${rest.join('/')}`;
}

const statusOf = (error: unknown): number | undefined =>
  (error as { response?: { statusCode?: number } }).response?.statusCode;

function failure(error: unknown, target: SecretTarget, verb: 'read' | 'write'): SecretManagerError {
  if (error instanceof SecretManagerError) return error;
  const status = statusOf(error);
  const err = error as { message?: string; code?: string };
  const kind =
    status === 404
      ? 'not_found'
      : status === 403 || status === 400 || status === 401
        ? 'denied'
        : /ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EAI_AGAIN|ECONNABORTED|ENOENT/.test(`${err.code ?? ''}`)
          ? 'unreachable'
          : 'failed';
  const detail = status !== undefined ? `HTTP ${status}: ${err.message ?? ''}` : (err.message ?? String(error));
  return new SecretManagerError(kind, `Vault could not ${verb} ${target.secretPath}: ${detail}`, { cause: error });
}
