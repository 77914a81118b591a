import { isKnownScope, scopeInfo } from '../../auth/scopes.js';
import type { Principal } from '../../auth/principal.js';
import { withResetSchedule } from '../../limits/schemas.js';
import { AppError, invalid } from '../../lib/errors.js';
import type { CreateApiKeyBody } from './schemas.js';

/** The scope that lets a key make more admin keys: without it no key can administer the rest. */
export const ADMIN_KEY_CREATE_SCOPE = 'organisation_service_api_keys.create';

/**
 * Scopes a key may be given: known ones, workspace scopes only for a workspace key, and none
 * the granting key does not hold itself.
 */
export function checkScopes(principal: Principal, scopes: string[], forWorkspaceKey: boolean): void {
  scopes.forEach((scope, index) => {
    if (!isKnownScope(scope))
      throw new AppError('UNKNOWN_SCOPE', `Unknown scope ${scope}; GET /v1/api-keys/scopes lists them.`, {
        param: `scopes[${index}]`,
      });
    if (forWorkspaceKey && !scopeInfo(scope)?.workspace)
      throw invalid(`scopes[${index}]`, `Scope ${scope} is organisation-wide and cannot be given to a workspace key.`);
    if (!principal.scopes.has(scope))
      throw new AppError('MISSING_SCOPE', `Cannot grant scope ${scope}: this API key does not hold it.`, {
        param: `scopes[${index}]`,
      });
  });
}

/** `expires_at` as stored: null for none, else a time in the future. */
export function checkExpiry(expiresAt: string | null | undefined, now: number): string | null {
  if (expiresAt === undefined || expiresAt === null) return null;
  const at = Date.parse(expiresAt);
  if (at <= now) throw invalid('expires_at', 'expires_at must be in the future.');
  return new Date(at).toISOString();
}

/** The limit columns of a new key; usage limits get their first reset time. */
export const limitsOf = (
  body: Pick<CreateApiKeyBody, 'rate_limits' | 'usage_limits' | 'alert_emails'>,
  now: number,
) => ({
  rate_limits: body.rate_limits ? JSON.stringify(body.rate_limits) : null,
  usage_limits: body.usage_limits ? JSON.stringify(withResetSchedule(body.usage_limits, now)) : null,
  alert_emails: storedAlertEmails(body.alert_emails),
});

/** `alert_emails` as stored: a de-duplicated JSON list, or null for none. */
export const storedAlertEmails = (emails: readonly string[] | null | undefined): string | null => {
  const unique = [...new Set((emails ?? []).map((email) => email.toLowerCase()))];
  return unique.length > 0 ? JSON.stringify(unique) : null;
};
