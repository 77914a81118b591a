import type { Principal } from '../../auth/principal.js';
import { updatedUsageLimits } from '../../limits/schemas.js';
import type { ApiKeyRow } from '../../storage/repositories/api-keys.js';
import { findManageableKey } from './key-access.js';
import { storedDefaults } from './key-defaults.js';
import { ADMIN_KEY_CREATE_SCOPE, checkExpiry, checkScopes, limitsOf, storedAlertEmails } from './key-fields.js';
import { createLockoutGuard } from './lockout-guard.js';
import { rotationFields } from './rotation-policy.js';
import type { UpdateApiKeyBody } from './schemas.js';
import { isoNow, type ApiKeyAdminDeps } from './service-deps.js';

/**
 * Changing and revoking keys. Every change drops the key from this instance's verifier cache
 * before the response is sent, so that it applies to the next request at once.
 */
export function createApiKeyUpdates(
  deps: Pick<ApiKeyAdminDeps, 'keys' | 'configs' | 'verifier' | 'clock' | 'secretReferences'>,
) {
  const now = () => isoNow(deps.clock);
  const lockout = createLockoutGuard(deps.keys, now);

  return {
    /**
     * Revokes at once: the key stops working on this instance before the response is sent. The
     * last key able to administer the organisation is refused (LAST_ADMIN_KEY).
     */
    async revoke(principal: Principal, id: string): Promise<ApiKeyRow> {
      const row = await findManageableKey(deps.keys, principal, id);
      await lockout.assertKeyMayGo(row, 'revoked');
      await deps.keys.update(row.id, { status: 'revoked', last_updated_at: now() });
      deps.verifier.invalidate(row.id);
      return row;
    },

    /** Changes a key's name, scopes, expiry and limits; raising a credit limit lets it through again at once. */
    async update(principal: Principal, id: string, body: UpdateApiKeyBody): Promise<ApiKeyRow> {
      const row = await findManageableKey(deps.keys, principal, id);
      const patch: Partial<ApiKeyRow> = { last_updated_at: now() };
      if (body.name !== undefined) patch.name = body.name;
      if (body.description !== undefined) patch.description = body.description;
      if (body.scopes !== undefined) {
        checkScopes(principal, body.scopes, row.type !== 'organisation-service');
        if (!body.scopes.includes(ADMIN_KEY_CREATE_SCOPE)) await lockout.assertKeyMayGo(row, 'changed');
        patch.scopes = JSON.stringify(body.scopes);
      }
      if (body.expires_at !== undefined) {
        patch.expires_at = checkExpiry(body.expires_at, deps.clock.now());
        // A later (or no) expiry brings back a key the lifecycle worker marked expired.
        if (row.status === 'expired') patch.status = 'active';
      }
      if (body.rotation_policy !== undefined)
        Object.assign(patch, await rotationFields(deps, principal, row.workspace_id, body.rotation_policy, row.id));
      if (body.defaults !== undefined)
        patch.defaults = await storedDefaults(deps.configs, principal, row.workspace_id, body.defaults);
      if (body.rate_limits !== undefined)
        patch.rate_limits = limitsOf({ rate_limits: body.rate_limits }, deps.clock.now()).rate_limits;
      if (body.alert_emails !== undefined) patch.alert_emails = storedAlertEmails(body.alert_emails);
      const usageLimits = updatedUsageLimits(row.usage_limits, body, deps.clock.now());
      if (usageLimits !== undefined) patch.usage_limits = usageLimits;
      await deps.keys.update(row.id, patch);
      deps.verifier.invalidate(row.id);
      return { ...row, ...patch };
    },
  };
}
