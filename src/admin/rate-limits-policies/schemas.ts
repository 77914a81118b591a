import { z } from 'zod';
import { AGENT_ENDPOINT_TYPE } from '../../agents/protocol.js';
import { ENDPOINT_TYPES } from '../../providers/endpoints.js';
import { idOrSlug, paginationQuery } from '../shared/pagination.js';

const METADATA_KEY = /^metadata\.[A-Za-z0-9_.-]{1,128}$/;
/**
 * What an `endpoint_type` condition may name: the provider endpoint families, `mcp` (MCP tool
 * calls) and the agent gateway's calls (docs/agents.md).
 */
const CONDITION_ENDPOINT_TYPES: readonly string[] = [...ENDPOINT_TYPES, 'mcp', AGENT_ENDPOINT_TYPE];
const BASE_KEYS = ['api_key', 'organisation_id', 'workspace_id'] as const;

export const conditionSchema = z
  .object({
    key: z
      .string()
      .refine(
        (key) => (BASE_KEYS as readonly string[]).includes(key) || key === 'endpoint_type' || METADATA_KEY.test(key),
        {
          message: 'key must be api_key, organisation_id, workspace_id, endpoint_type or metadata.<field>',
        },
      ),
    value: z.string().min(1).max(1024),
  })
  .strict()
  .superRefine((condition, ctx) => {
    if (condition.key === 'endpoint_type' && !CONDITION_ENDPOINT_TYPES.includes(condition.value)) {
      ctx.addIssue({
        code: 'custom',
        path: ['value'],
        message: `endpoint_type must be one of ${CONDITION_ENDPOINT_TYPES.join(', ')}`,
      });
    }
  });

export const groupBySchema = z
  .object({
    key: z.string().refine((key) => (BASE_KEYS as readonly string[]).includes(key) || METADATA_KEY.test(key), {
      message: 'key must be api_key, organisation_id, workspace_id or metadata.<field>',
    }),
  })
  .strict();

export const policyType = z.enum(['requests', 'tokens']);
export const policyUnit = z.enum(['rpm', 'rph', 'rpd', 'rpw']);
export const policyStatus = z.enum(['active', 'archived']);
const policyValue = z.number().finite().min(0).max(1e15);
const policyName = z.string().max(255);

export const createPolicyBody = z
  .object({
    conditions: z.array(conditionSchema).min(1).max(50),
    group_by: z.array(groupBySchema).min(1).max(10),
    type: policyType,
    unit: policyUnit,
    value: policyValue,
    name: policyName.nullable().optional(),
    workspace_id: idOrSlug.optional(),
    organisation_id: z.uuid().optional(),
  })
  .strict();

export const updatePolicyBody = z
  .object({
    name: policyName.nullable().optional(),
    conditions: z.array(conditionSchema).min(1).max(50).optional(),
    group_by: z.array(groupBySchema).min(1).max(10).optional(),
    type: policyType.optional(),
    unit: policyUnit.optional(),
    value: policyValue.optional(),
    status: policyStatus.optional(),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one field to change' });

export const listPoliciesQuery = z
  .object({
    workspace_id: idOrSlug.optional(),
    status: policyStatus.default('active'),
    type: policyType.optional(),
    unit: policyUnit.optional(),
    ...paginationQuery,
  })
  .strict();

export const policyParams = z.object({ rateLimitsPolicyId: z.string().min(1).max(64) });

export const policyObject = z.object({
  id: z.uuid(),
  name: z.string().nullable(),
  conditions: z.array(z.object({ key: z.string(), value: z.string() })),
  group_by: z.array(z.object({ key: z.string() })),
  type: policyType,
  unit: policyUnit,
  value: z.number(),
  status: policyStatus,
  workspace_id: z.uuid(),
  organisation_id: z.uuid(),
  created_at: z.string(),
  last_updated_at: z.string(),
  object: z.literal('rate_limits_policy'),
});

export type CreatePolicyBody = z.infer<typeof createPolicyBody>;
export type UpdatePolicyBody = z.infer<typeof updatePolicyBody>;
export type ListPoliciesQuery = z.infer<typeof listPoliciesQuery>;
export type PolicyObject = z.infer<typeof policyObject>;
