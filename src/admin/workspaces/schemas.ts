import { z } from 'zod';
import { workspaceDefaultsInput } from '../../guardrails/store/index.js';
import { rateLimitEntry, usageLimitsField } from '../../limits/schemas.js';
import { allowedModelsField } from '../shared/allowed-models.js';
import { memberObject } from '../members/schemas.js';
import { idOrSlug, paginationQuery } from '../shared/pagination.js';

/** Metadata every gateway request of the workspace carries unless the key or the request sets the field. */
const defaultMetadataField = z
  .record(z.string().min(1).max(128), z.string().max(1024))
  .refine((metadata) => Object.keys(metadata).length <= 64, 'at most 64 metadata keys')
  .nullable()
  .optional();

/**
 * What the workspace brings to its keys' gateway requests: default metadata, the guardrails every
 * request runs (docs/guardrails.md) and the models they may use (docs/models.md). A field not
 * sent is kept; null clears them all.
 */
const defaultsField = workspaceDefaultsInput
  .extend({
    metadata: defaultMetadataField,
    allowed_models: allowedModelsField.optional(),
    user_api_key_config: z
      .unknown()
      .optional()
      .superRefine((value, ctx) => {
        if (value !== undefined && value !== null)
          ctx.addIssue({
            code: 'custom',
            message:
              'defaults.user_api_key_config is not supported: svcgw sets a default config per API key (defaults.config_id of the key), not per workspace.',
          });
      }),
  })
  .nullable()
  .optional()
  .describe(
    "`metadata`: default metadata of the workspace's gateway requests (the key's and the request's own fields win); `input_guardrails` / `output_guardrails`: guardrail ids or slugs, or inline guardrails, run on every request of the workspace; `allowed_models`: the models its keys may use.",
  );

/**
 * The reference's `usage_limits` of a workspace: an array of at most one budget. The single object
 * (svcgw's earlier form) is still taken; `[]` or null removes the budget.
 */
const workspaceUsageLimitsField = z
  .preprocess((value: unknown, ctx) => {
    if (!Array.isArray(value)) return value;
    const list = value as unknown[];
    if (list.length > 1) {
      ctx.addIssue({
        code: 'custom',
        message: 'a workspace has one usage limit: send an array of at most one (add usage-limits policies for more)',
        input: value,
      });
      return z.NEVER;
    }
    return list[0] ?? null;
  }, usageLimitsField)
  .optional()
  .describe(
    'An array of at most one budget `{credit_limit, type, alert_threshold, periodic_reset, …}`; [] removes it.',
  );

/** Rate limits every gateway request of the workspace counts against (all its keys together). */
const workspaceRateLimitsField = z
  .array(rateLimitEntry)
  .max(10)
  .nullable()
  .optional()
  .describe(
    "`[{type: requests|tokens, unit: rps|rpm|rph|rpd|rpw, value}]`, counted over all the workspace's traffic; [] or null removes them.",
  );

export const createWorkspaceBody = z
  .object({
    name: z.string().min(1).max(255),
    slug: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,254}$/, 'slug takes lower-case letters, digits, - and _')
      .optional(),
    description: z.string().max(2048).nullable().optional(),
    usage_limits: workspaceUsageLimitsField,
    rate_limits: workspaceRateLimitsField,
    defaults: defaultsField,
    users: z
      .array(z.string().min(1).max(320))
      .max(100)
      .optional()
      .describe('Users of the organisation (ids or e-mail addresses) added to the workspace as members.'),
  })
  .strict();

export const updateWorkspaceBody = z
  .object({
    name: z.string().min(1).max(255).optional(),
    description: z.string().max(2048).nullable().optional(),
    usage_limits: workspaceUsageLimitsField,
    rate_limits: workspaceRateLimitsField,
    defaults: defaultsField,
    reset_usage: z
      .boolean()
      .optional()
      .describe('Starts a new usage period now (an exhausted workspace becomes active).'),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one field to change' });

export const listWorkspacesQuery = z
  .object({
    status: z
      .string()
      .regex(/^(active|archived)(,(active|archived))*$/, 'status is a comma-separated list of active, archived')
      .default('active'),
    name: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe('Workspaces whose name contains this, without regard to case.'),
    exact_name: z.string().min(1).max(255).optional().describe('The workspace with exactly this name.'),
    ...paginationQuery,
  })
  .strict();

export const workspaceParams = z.object({ workspaceId: idOrSlug });

export const workspaceObject = z.object({
  id: z.uuid(),
  slug: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  status: z.enum(['active', 'archived']),
  is_default: z.boolean(),
  organisation_id: z.uuid(),
  usage_limits: z
    .array(z.record(z.string(), z.unknown()))
    .describe("The workspace's budget (at most one), with `current_usage` when read alone; [] when none."),
  rate_limits: z.array(z.object({ type: z.string(), unit: z.string(), value: z.number() })),
  last_reset_at: z.string().nullable(),
  defaults: z.object({
    metadata: z.record(z.string(), z.string()),
    input_guardrails: z.array(z.unknown()),
    output_guardrails: z.array(z.unknown()),
    allowed_models: z.array(z.string()).nullable(),
  }),
  created_at: z.string(),
  last_updated_at: z.string(),
  object: z.literal('workspace'),
});

/** A workspace read alone: also its members (the reference's `WorkspaceWithUsers`). */
export const workspaceWithUsers = workspaceObject.extend({ users: z.array(memberObject) });

export type CreateWorkspaceBody = z.infer<typeof createWorkspaceBody>;
export type UpdateWorkspaceBody = z.infer<typeof updateWorkspaceBody>;
export type WorkspaceObject = z.infer<typeof workspaceObject>;
export type WorkspaceWithUsers = z.infer<typeof workspaceWithUsers>;
