import type { CredentialResolver } from '../admin/credentials/index.js';
import type { ApiKeyVerifier } from '../auth/api-key-service.js';
import type { Change, ChangeBus } from '../storage/change-bus.js';

interface Clearable {
  invalidate(): void;
}

/**
 * The key verifier and credential resolver as the rest of the server uses them: their
 * invalidations go through the bus (which clears this instance's copy at once and every other
 * instance's once the change commits).
 */
export function publishingCaches(
  changes: ChangeBus,
  local: { keys: ApiKeyVerifier; credentials: CredentialResolver },
): { keys: ApiKeyVerifier; credentials: CredentialResolver } {
  return {
    keys: {
      ...local.keys,
      invalidate: (id) => changes.publish({ topic: 'key', id }),
      invalidateAll: () => changes.publish({ topic: 'keys' }),
    },
    credentials: { ...local.credentials, invalidateAll: () => changes.publish({ topic: 'credentials' }) },
  };
}

/** Clears this instance's caches for every change on the bus; `all` (after a lost connection) clears them all. */
export function subscribeCaches(
  changes: ChangeBus,
  caches: {
    keys: ApiKeyVerifier;
    credentials: CredentialResolver;
    configs: Clearable;
    guardrails: Clearable;
    limits: Clearable;
    settings: Clearable;
    /** The deployment this instance serves, when it serves one. */
    deployment?: Clearable | null;
    mcp: Clearable;
  },
): () => void {
  const clear: Record<Exclude<Change['topic'], 'key' | 'all'>, () => void> = {
    keys: () => caches.keys.invalidateAll(),
    credentials: () => caches.credentials.invalidateAll(),
    configs: () => caches.configs.invalidate(),
    guardrails: () => caches.guardrails.invalidate(),
    limits: () => {
      caches.limits.invalidate();
      // A budget reset moves the deployment's period too.
      caches.deployment?.invalidate();
    },
    settings: () => caches.settings.invalidate(),
    deployments: () => caches.deployment?.invalidate(),
    mcp: () => caches.mcp.invalidate(),
  };
  return changes.on((change) => {
    if (change.topic === 'key') caches.keys.invalidate(change.id);
    else if (change.topic === 'all') for (const fn of Object.values(clear)) fn();
    else clear[change.topic]();
  });
}
