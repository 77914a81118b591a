import { z } from 'zod';
import { rateLimitsField, usageLimitsField } from '../../limits/schemas.js';
import { idOrSlug, paginationQuery } from '../shared/pagination.js';

export const deploymentType = z.enum(['production', 'non-production']);
export const deploymentStatus = z.enum(['active', 'archived']);

/** Lower-case letters, digits and dashes (what `svcgw serve --deployment` takes); never a UUID. */
const deploymentSlug = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{0,62}$/,
    'slug is 1–63 lower-case letters, digits and dashes, starting with a letter or digit',
  )
  .refine(
    (slug) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(slug),
    'slug cannot look like an id',
  );

const configField = idOrSlug
  .nullable()
  .optional()
  .describe(
    'The config (id or slug) its instances apply to requests that name none (neither x-service-config, nor a key default, nor a model alias to a config); null: none.',
  );
const allowedWorkspacesField = z
  .array(idOrSlug)
  .min(1)
  .max(1000)
  .nullable()
  .optional()
  .describe(
    'The workspaces (ids or slugs) whose requests its instances serve; the others get 403 DEPLOYMENT_FORBIDDEN. null or absent: every workspace.',
  );
const rateLimitsOfDeployment = rateLimitsField
  .optional()
  .describe('Rate limits of the whole deployment, counted across its instances (`{type, unit, value}`).');
const usageLimitsOfDeployment = usageLimitsField
  .optional()
  .describe("The deployment's budget, counted across its instances (shape of a key's usage_limits).");

export const createDeploymentBody = z
  .object({
    name: z.string().min(1).max(255),
    slug: deploymentSlug.optional().describe('Derived from the name when left out; it cannot change later.'),
    type: deploymentType,
    description: z.string().max(2048).nullable().optional(),
    config_id: configField,
    rate_limits: rateLimitsOfDeployment,
    usage_limits: usageLimitsOfDeployment,
    allowed_workspaces: allowedWorkspacesField,
  })
  .strict();

export const updateDeploymentBody = z
  .object({
    name: z.string().min(1).max(255).optional(),
    type: deploymentType.optional(),
    description: z.string().max(2048).nullable().optional(),
    config_id: configField,
    rate_limits: rateLimitsOfDeployment,
    usage_limits: usageLimitsOfDeployment,
    reset_usage: z.boolean().optional().describe('Starts a new usage period of its budget now.'),
    allowed_workspaces: allowedWorkspacesField,
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one field to change' });

export const listDeploymentsQuery = z
  .object({
    type: deploymentType.optional().describe('Only deployments of this type.'),
    status: deploymentStatus.default('active'),
    ...paginationQuery,
  })
  .strict();

export const deploymentParams = z.object({
  deploymentId: idOrSlug.describe('The deployment id or slug (the active one first).'),
});

export const deploymentInstanceObject = z.object({
  id: z.uuid(),
  status: z
    .enum(['active', 'gone', 'stopped', 'refused'])
    .describe(
      '`active`: heartbeating; `gone`: silent for 3 heartbeat intervals; `stopped`: shut down cleanly; `refused`: its registration was turned down (`refusal_reason`).',
    ),
  version: z.string(),
  address: z.string().nullable(),
  hostname: z.string(),
  pid: z.number().int(),
  heartbeat_interval_ms: z.number().int(),
  started_at: z.string(),
  last_heartbeat_at: z.string(),
  stopped_at: z.string().nullable(),
  refusal_reason: z.string().nullable(),
  object: z.literal('deployment_instance'),
});

export const deploymentObject = z.object({
  id: z.uuid(),
  slug: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  type: deploymentType,
  status: deploymentStatus,
  organisation_id: z.uuid(),
  config_id: z.uuid().nullable(),
  config_slug: z.string().nullable(),
  rate_limits: z.array(z.object({ type: z.string(), unit: z.string(), value: z.number() })).nullable(),
  usage_limits: z.record(z.string(), z.unknown()).nullable(),
  last_reset_at: z.string().nullable(),
  allowed_workspaces: z
    .array(z.object({ id: z.uuid(), slug: z.string() }))
    .nullable()
    .describe('null: every workspace.'),
  created_at: z.string(),
  last_updated_at: z.string(),
  object: z.literal('deployment'),
});

export const deploymentDetail = deploymentObject.extend({
  instances: z
    .array(deploymentInstanceObject)
    .describe('Instances heard from in the last 24 hours (refused attempts included), oldest first.'),
  minimum_gateway_version: z
    .string()
    .describe(
      'The version an instance needs to join now: the highest min_gateway_version among live instances and this server.',
    ),
});

export type CreateDeploymentBody = z.infer<typeof createDeploymentBody>;
export type UpdateDeploymentBody = z.infer<typeof updateDeploymentBody>;
export type ListDeploymentsQuery = z.infer<typeof listDeploymentsQuery>;
export type DeploymentObject = z.infer<typeof deploymentObject>;
export type DeploymentDetail = z.infer<typeof deploymentDetail>;
export type DeploymentInstanceObject = z.infer<typeof deploymentInstanceObject>;
