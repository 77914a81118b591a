import { z } from 'zod';
import { MAX_TRANSITION_MS, MIN_TRANSITION_MS, ROTATION_PERIOD_MS } from '../../auth/api-key-service.js';
import { rateLimitsField, usageLimitsField } from '../../limits/schemas.js';
import { allowedModelsField } from '../shared/allowed-models.js';
import { idOrSlug, paginationQuery } from '../shared/pagination.js';

const keyName = z.string().min(1).max(255);

const transitionPeriod = z
  .number()
  .int()
  .min(MIN_TRANSITION_MS)
  .max(MAX_TRANSITION_MS)
  .describe('Milliseconds during which the old and the new key are both valid; at least 30 minutes (1800000).');

/**
 * When the key is rotated by itself: every `rotation_period`, or once at `next_rotation_at`
 * (the two are mutually exclusive). The transition must be shorter than the period (7 days;
 * 28 days for monthly, the shortest month). `null` removes the policy.
 */
export const rotationPolicyField = z
  .object({
    rotation_period: z.enum(['weekly', 'monthly']).nullable().optional(),
    next_rotation_at: z.iso.datetime({ offset: true }).nullable().optional(),
    key_transition_period_ms: transitionPeriod.optional(),
    secret_reference_id: idOrSlug
      .nullable()
      .optional()
      .describe(
        'A secret reference (id or slug) each rotation writes the new key to, so that clients reading it there pick it up; organisation owners and admins only.',
      ),
    secret_key: z
      .string()
      .min(1)
      .max(256)
      .nullable()
      .optional()
      .describe("The key of a JSON secret to set; else the reference's secret_key, else the whole secret."),
  })
  .strict()
  .superRefine((policy, ctx) => {
    if (policy.rotation_period && policy.next_rotation_at) {
      ctx.addIssue({
        code: 'custom',
        path: ['next_rotation_at'],
        message: 'rotation_period and next_rotation_at are mutually exclusive',
      });
    } else if (!policy.rotation_period && !policy.next_rotation_at) {
      ctx.addIssue({
        code: 'custom',
        path: ['rotation_period'],
        message: 'rotation_policy needs rotation_period or next_rotation_at',
      });
    }
    if (
      policy.rotation_period &&
      policy.key_transition_period_ms !== undefined &&
      policy.key_transition_period_ms >= ROTATION_PERIOD_MS[policy.rotation_period]
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['key_transition_period_ms'],
        message: `key_transition_period_ms must be less than the rotation period (${ROTATION_PERIOD_MS[policy.rotation_period]} ms)`,
      });
    }
  })
  .nullable();
export type RotationPolicyInput = NonNullable<z.infer<typeof rotationPolicyField>>;

/**
 * What a key brings to every gateway request it makes: metadata merged under the request's own,
 * and a default config (slug or id) used when the request names none. With
 * `allow_config_override: false` the key's config is the only one its requests may use.
 */
export const keyDefaultsField = z
  .object({
    metadata: z
      .record(z.string().max(128), z.string().max(1024))
      .refine((m) => Object.keys(m).length <= 64, 'at most 64 metadata keys')
      .optional(),
    config_id: z
      .string()
      .min(1)
      .max(255)
      .nullable()
      .optional()
      .describe('Slug or id of an active config; stored as its id.'),
    allow_config_override: z
      .boolean()
      .optional()
      .describe('Whether requests may name another config with x-service-config (default true).'),
    allowed_models: allowedModelsField.optional(),
  })
  .strict()
  .nullable();
export type KeyDefaultsInput = NonNullable<z.infer<typeof keyDefaultsField>>;

/** The stored (and shown) defaults of a key. */
export const keyDefaultsObject = z
  .object({
    metadata: z.record(z.string(), z.string()),
    config_id: z.string().nullable(),
    allow_config_override: z.boolean(),
    allowed_models: z.array(z.string()).nullable(),
  })
  .nullable();

/** Addresses the key's usage and lifecycle alerts also go to (docs/notifications.md); null or [] clears them. */
const alertEmailsField = z
  .array(z.email())
  .max(20)
  .nullable()
  .optional()
  .describe(
    "E-mail addresses that the key's alerts (usage thresholds, exhaustion, rotation, expiry) also go to, besides the organisation's and workspace's administrators.",
  );

export const createApiKeyBody = z
  .object({
    name: keyName,
    description: z.string().max(1024).nullable().optional(),
    scopes: z.array(z.string().min(1).max(128)).max(200),
    workspace_id: idOrSlug.optional(),
    user_id: z.uuid().optional(),
    organisation_id: z.uuid().optional(),
    expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
    rate_limits: rateLimitsField.optional(),
    usage_limits: usageLimitsField.optional(),
    rotation_policy: rotationPolicyField.optional(),
    defaults: keyDefaultsField.optional(),
    alert_emails: alertEmailsField,
  })
  .strict();

export const updateApiKeyBody = z
  .object({
    name: keyName.optional(),
    description: z.string().max(1024).nullable().optional(),
    scopes: z.array(z.string().min(1).max(128)).max(200).optional(),
    expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
    rate_limits: rateLimitsField.optional(),
    usage_limits: usageLimitsField.optional(),
    rotation_policy: rotationPolicyField.optional(),
    defaults: keyDefaultsField.optional(),
    alert_emails: alertEmailsField,
    reset_usage: z.boolean().optional().describe('Starts a new usage period now (an exhausted key becomes active).'),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one field to change' });

export const listApiKeysQuery = z.object({ workspace_id: idOrSlug.optional(), ...paginationQuery }).strict();

export const apiKeyParams = z.object({ apiKeyId: z.string().min(1).max(64) });

export const apiKeyObject = z.object({
  id: z.uuid(),
  key: z.string().describe('Masked: the raw key is shown only once, when it is created.'),
  name: z.string(),
  description: z.string().optional().describe('Absent when the key has none.'),
  type: z.enum(['organisation-service', 'workspace-service', 'workspace-user']),
  organisation_id: z.uuid(),
  workspace_id: z.string().nullable(),
  user_id: z.string().nullable(),
  status: z.enum(['active', 'revoked', 'expired']),
  scopes: z.array(z.string()),
  creation_mode: z.string(),
  expires_at: z.string().nullable(),
  rate_limits: z.array(z.object({ type: z.string(), unit: z.string(), value: z.number() })).nullable(),
  usage_limits: z.record(z.string(), z.unknown()).optional().describe('Absent when the key has no budget.'),
  last_reset_at: z
    .string()
    .nullable()
    .describe('Start of the current usage period (usage_limits.last_reset_at), or null.'),
  rotation_policy: z
    .object({
      rotation_period: z.enum(['weekly', 'monthly']).nullable(),
      next_rotation_at: z.string().nullable(),
      key_transition_period_ms: z.number(),
      secret_reference_id: z.string().nullable().describe('The secret reference rotations write the new key to (id).'),
      secret_key: z.string().nullable(),
    })
    .nullable(),
  defaults: keyDefaultsObject.unwrap().optional().describe('Absent when the key has no defaults.'),
  alert_emails: z.array(z.string()),
  key_transition_expires_at: z
    .string()
    .nullable()
    .describe('While a rotation is in its transition: when the previous key stops working.'),
  new_key_pending_since: z
    .string()
    .nullable()
    .describe(
      'Set by a scheduled rotation: no new key has been issued yet; POST /v1/api-keys/{apiKeyId}/rotate issues it.',
    ),
  created_at: z.string(),
  last_updated_at: z.string(),
  object: z.literal('api-key'),
});

export const createdApiKey = z.object({ id: z.uuid(), key: z.string(), object: z.literal('api-key') });

export const rotateApiKeyBody = z.object({ key_transition_period_ms: transitionPeriod.optional() }).strict();

export const rotatedApiKey = z.object({
  id: z.uuid(),
  key: z.string().describe('The new raw key, shown in this response only.'),
  key_transition_expires_at: z.string().describe('The previous key stays valid until then.'),
  object: z.literal('api-key'),
});

export type CreateApiKeyBody = z.infer<typeof createApiKeyBody>;
export type UpdateApiKeyBody = z.infer<typeof updateApiKeyBody>;
export type RotateApiKeyBody = z.infer<typeof rotateApiKeyBody>;
export type ApiKeyObject = z.infer<typeof apiKeyObject>;
