import { z } from 'zod';
import { idOrSlug, paginationQuery } from '../shared/pagination.js';
import { conditionSchema, groupBySchema, policyStatus } from '../rate-limits-policies/schemas.js';

export const usageLimitType = z.enum(['cost', 'tokens']);
export const periodicReset = z.enum(['weekly', 'monthly']);
export const bucketStatus = z.enum(['active', 'exhausted']);
const amount = z.number().finite().positive().max(1e15);
const policyName = z.string().max(255);
const periodicResetDays = z.number().int().min(1).max(365);
const resetAt = z.iso.datetime({ offset: true });
/** A bucket's value key: the group-by values joined with `|`. */
const valueKey = z.string().min(1).max(1024);

/**
 * Single-field bounds only: the rules across fields (threshold below the limit, one schedule,
 * a reset time only with a schedule) are checked by the service, against the merged policy on
 * update, so that create and update answer them the same way.
 */
export const createPolicyBody = z
  .object({
    conditions: z.array(conditionSchema).min(1).max(50),
    group_by: z.array(groupBySchema).min(1).max(10),
    type: usageLimitType,
    credit_limit: amount,
    alert_threshold: amount.nullable().optional(),
    periodic_reset: periodicReset.nullable().optional(),
    periodic_reset_days: periodicResetDays.nullable().optional(),
    next_usage_reset_at: resetAt.nullable().optional(),
    name: policyName.nullable().optional(),
    workspace_id: idOrSlug.optional(),
    organisation_id: z.uuid().optional(),
  })
  .strict();

export const updatePolicyBody = z
  .object({
    name: policyName.nullable().optional(),
    credit_limit: amount.optional(),
    alert_threshold: amount.nullable().optional().describe('null clears the threshold.'),
    periodic_reset: periodicReset
      .nullable()
      .optional()
      .describe('null removes the schedule (the limit becomes cumulative).'),
    periodic_reset_days: periodicResetDays.nullable().optional(),
    next_usage_reset_at: resetAt
      .nullable()
      .optional()
      .describe('Recomputed from the schedule when the schedule changes and this is not given.'),
    conditions: z.array(conditionSchema).min(1).max(50).optional(),
    group_by: z.array(groupBySchema).min(1).max(10).optional(),
    status: policyStatus.optional(),
    reset_usage_for_value: valueKey.optional().describe("Forgets this bucket's usage in the current period."),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one field to change' });

export const listPoliciesQuery = z
  .object({
    workspace_id: idOrSlug.optional(),
    status: policyStatus.default('active'),
    type: usageLimitType.optional(),
    ...paginationQuery,
  })
  .strict();

export const getPolicyQuery = z
  .object({
    include_usage: z
      .enum(['true', 'false'])
      .default('false')
      .describe('Adds value_key_usage_map, the usage of every bucket in the current period.'),
  })
  .strict();

export const listEntitiesQuery = z
  .object({
    status: bucketStatus.optional(),
    search: z.string().min(1).max(1024).optional().describe('Substring of the value key.'),
    page_size: z.coerce.number().int().min(1).max(100).default(50).describe('Items per page (1 to 100).'),
    current_page: paginationQuery.current_page,
  })
  .strict();

export const policyParams = z.object({ policyUsageLimitsId: z.string().min(1).max(64) });
export const entityParams = policyParams.extend({ entityId: valueKey.describe('The value key of the bucket.') });

const bucketUsage = z.object({ current_usage: z.number(), status: bucketStatus });

export const policyObject = z.object({
  id: z.uuid(),
  name: z.string().nullable(),
  conditions: z.array(z.object({ key: z.string(), value: z.string() })),
  group_by: z.array(z.object({ key: z.string() })),
  type: usageLimitType,
  credit_limit: z.number(),
  alert_threshold: z.number().nullable(),
  periodic_reset: periodicReset.nullable(),
  periodic_reset_days: z.number().int().nullable(),
  next_usage_reset_at: z.string().nullable(),
  last_reset_at: z.string().nullable(),
  status: policyStatus,
  workspace_id: z.uuid(),
  organisation_id: z.uuid(),
  created_at: z.string(),
  last_updated_at: z.string(),
  object: z.literal('usage_limits_policy'),
  value_key_usage_map: z.record(z.string(), bucketUsage).optional(),
});

export const entityObject = z.object({
  id: z.string().describe('The value key; what the reset endpoint takes as entityId.'),
  value_key: z.string(),
  current_usage: z.number(),
  status: bucketStatus,
  entity_type: z
    .enum(['api_key', 'workspace'])
    .nullable()
    .describe('Set when the bucket (or a condition) names one API key or workspace.'),
  entity_id: z.string().nullable(),
});

export type CreatePolicyBody = z.infer<typeof createPolicyBody>;
export type UpdatePolicyBody = z.infer<typeof updatePolicyBody>;
export type ListPoliciesQuery = z.infer<typeof listPoliciesQuery>;
export type ListEntitiesQuery = z.infer<typeof listEntitiesQuery>;
export type PolicyObject = z.infer<typeof policyObject>;
export type EntityObject = z.infer<typeof entityObject>;
