import type { RateLimitEntry, UsageLimits } from './schemas.js';

/**
 * The limits of the stored credential a request is sent with (a provider or a virtual key):
 * an expiry, rate limits and a budget of its own, counted whatever key or workspace uses it.
 */
export interface CredentialLimits {
  kind: 'provider' | 'virtual_key';
  id: string;
  slug: string;
  name: string;
  workspaceId: string;
  createdAt: string;
  expiresAt: string | null;
  rateLimits: readonly RateLimitEntry[] | null;
  usageLimits: (UsageLimits & { last_reset_at?: string | null }) | null;
}

/** The limits of a stored row (JSON columns), or null when it has none, so that the gateway skips them. */
export function credentialLimitsOf(
  kind: CredentialLimits['kind'],
  row: {
    id: string;
    slug: string;
    name: string;
    workspace_id: string;
    created_at: string;
    expires_at: string | null;
    rate_limits: string | null;
    usage_limits: string | null;
  },
): CredentialLimits | null {
  if (row.expires_at === null && row.rate_limits === null && row.usage_limits === null) return null;
  const rateLimits = row.rate_limits === null ? null : (JSON.parse(row.rate_limits) as RateLimitEntry[]);
  return {
    kind,
    id: row.id,
    slug: row.slug,
    name: row.name,
    workspaceId: row.workspace_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    rateLimits: rateLimits && rateLimits.length > 0 ? rateLimits : null,
    usageLimits: row.usage_limits === null ? null : (JSON.parse(row.usage_limits) as CredentialLimits['usageLimits']),
  };
}

export const credentialLabel = (limits: Pick<CredentialLimits, 'kind' | 'slug'>) =>
  limits.kind === 'provider' ? `provider @${limits.slug}` : `virtual key ${limits.slug}`;
