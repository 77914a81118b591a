import { parseRotationPolicy } from '../../auth/api-key-service.js';
import type { ApiKeyRow } from '../../storage/repositories/api-keys.js';
import type { ApiKeyObject } from './schemas.js';

/** The key as the API shows it: masked, JSON columns parsed, the transition end while one runs. */
export function toApiKeyObject(row: ApiKeyRow, now: number): ApiKeyObject {
  const usageLimits =
    row.usage_limits === null
      ? null
      : (JSON.parse(row.usage_limits) as ApiKeyObject['usage_limits'] & { last_reset_at?: string | null });
  const policy = parseRotationPolicy(row.rotation_policy);
  const inTransition = row.previous_key_expires_at !== null && Date.parse(row.previous_key_expires_at) > now;
  return {
    id: row.id,
    key: row.key_hint,
    name: row.name,
    ...(row.description === null ? {} : { description: row.description }),
    type: row.type,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    user_id: row.user_id,
    status: row.status,
    scopes: JSON.parse(row.scopes) as string[],
    creation_mode: row.creation_mode,
    expires_at: row.expires_at,
    rate_limits: row.rate_limits === null ? null : (JSON.parse(row.rate_limits) as ApiKeyObject['rate_limits']),
    ...(usageLimits === null ? {} : { usage_limits: usageLimits }),
    last_reset_at: usageLimits?.last_reset_at ?? null,
    rotation_policy:
      policy === null
        ? null
        : {
            rotation_period: policy.rotation_period,
            next_rotation_at: row.next_rotation_at,
            key_transition_period_ms: policy.key_transition_period_ms,
            secret_reference_id: policy.secret_reference_id ?? null,
            secret_key: policy.secret_key ?? null,
          },
    ...(row.defaults === null || row.defaults === undefined
      ? {}
      : { defaults: withAllowedModels(JSON.parse(row.defaults) as NonNullable<ApiKeyObject['defaults']>) }),
    alert_emails: row.alert_emails ? (JSON.parse(row.alert_emails) as string[]) : [],
    key_transition_expires_at: inTransition ? row.previous_key_expires_at : null,
    new_key_pending_since: row.new_key_pending_since,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    object: 'api-key',
  };
}

/** Keys stored before model limits existed have no `allowed_models`: null, any model. */
const withAllowedModels = (defaults: NonNullable<ApiKeyObject['defaults']>) => ({
  ...defaults,
  allowed_models: defaults.allowed_models ?? null,
});
