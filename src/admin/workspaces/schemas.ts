import { z } from 'zod';
import { workspaceDefaultsInput } from '../../guardrails/store/index.js';
import { usageLimitsField } from '../../limits/schemas.js';
import { allowedModelsField } from '../shared/allowed-models.js';
import { idOrSlug, paginationQuery } from '../shared/pagination.js';

/**
 * What the workspace brings to its keys' gateway requests: the guardrails every request runs
 * (docs/guardrails.md) and the models they may use (docs/models.md). A field not sent is kept;
 * null clears them all.
 */
const defaultsField = workspaceDefaultsInput
  .extend({ allowed_models: allowedModelsField.optional() })
  .nullable()
  .optional()
  .describe(
    '`input_guardrails` / `output_guardrails`: guardrail ids or slugs, or inline guardrails, run on every request of the workspace; `allowed_models`: the models its keys may use.',
  );

export const createWorkspaceBody = z
  .object({
    name: z.string().min(1).max(255),
    slug: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,254}$/, 'slug takes lower-case letters, digits, - and _')
      .optional(),
    description: z.string().max(2048).nullable().optional(),
    usage_limits: usageLimitsField.optional(),
    defaults: defaultsField,
  })
  .strict();

export const updateWorkspaceBody = z
  .object({
    name: z.string().min(1).max(255).optional(),
    description: z.string().max(2048).nullable().optional(),
    usage_limits: usageLimitsField.optional(),
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
  usage_limits: z.record(z.string(), z.unknown()).nullable(),
  last_reset_at: z.string().nullable(),
  defaults: z.object({
    input_guardrails: z.array(z.unknown()),
    output_guardrails: z.array(z.unknown()),
    allowed_models: z.array(z.string()).nullable(),
  }),
  created_at: z.string(),
  last_updated_at: z.string(),
  object: z.literal('workspace'),
});

export type CreateWorkspaceBody = z.infer<typeof createWorkspaceBody>;
export type UpdateWorkspaceBody = z.infer<typeof updateWorkspaceBody>;
export type WorkspaceObject = z.infer<typeof workspaceObject>;
