import { z } from 'zod';
import { guardrailEntry } from './guardrails.js';
import { promptSections } from './prompts.js';
import { secretReferenceEntry } from './secret-references.js';
import { toolSections } from './tools-schema.js';

const condition = z.object({ key: z.string().min(1), value: z.string() }).strict();
const groupBy = z.object({ key: z.string().min(1) }).strict();
const looseObject = z.record(z.string(), z.unknown());
const slug = z.string().min(1).max(255);

/** Fields whose value is left as it is on the server when the file does not mention them. */
const workspace = z
  .object({
    slug: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,254}$/, 'slug takes lower-case letters, digits, - and _'),
    name: z.string().min(1).max(255),
    description: z.string().nullable().optional(),
    usage_limits: looseObject.nullable().optional(),
  })
  .strict();

/** An integration's model list (docs/models.md): models not in the file are left as they are. */
const integrationCatalogue = {
  allow_all_models: z.boolean().optional(),
  models: z
    .array(
      z
        .object({
          slug: z.string().min(1).max(255),
          enabled: z.boolean().default(true),
          name: z.string().min(1).max(255).optional(),
          is_custom: z.boolean().optional(),
          is_finetune: z.boolean().optional(),
          base_model_slug: z.string().nullable().optional(),
          pricing_config: looseObject.nullable().optional(),
        })
        .strict(),
    )
    .optional(),
};

/** A model alias; without `workspace` it is organisation-wide. */
const alias = z
  .object({
    name: z.string().min(1).max(128),
    workspace: slug.optional().describe('slug of its workspace; organisation-wide when left out'),
    model: z.string().optional().describe('@<provider slug>/<model>'),
    config: slug.optional().describe("slug of a config of the alias's workspace"),
    description: z.string().nullable().optional(),
  })
  .strict()
  .refine((a) => (a.model === undefined) !== (a.config === undefined), {
    message: 'an alias names exactly one of model and config',
    path: ['model'],
  });

const integration = z
  .object({
    slug,
    name: z.string().min(1).max(255),
    ai_provider_id: z.string().min(1),
    key: z.string().min(1).nullable().optional(),
    description: z.string().nullable().optional(),
    configurations: looseObject.optional(),
    tags: z.record(z.string(), z.string()).optional(),
    ...integrationCatalogue,
  })
  .strict();

const provider = z
  .object({
    slug,
    name: z.string().min(1).max(255),
    integration: slug.describe('slug of the integration'),
    workspace: slug.optional().describe('slug of the workspace; the default workspace when left out'),
    note: z.string().nullable().optional(),
    tags: z.record(z.string(), z.string()).optional(),
  })
  .strict();

/** A stored gateway config, known by its slug (unique among the organisation's active configs). */
const gatewayConfig = z
  .object({
    slug: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'a config slug is 1–63 lower-case letters, digits and dashes')
      .refine(
        (s) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(s),
        'a config slug cannot look like an id',
      ),
    name: z.string().min(1).max(255),
    workspace: slug.optional().describe('id or slug of the workspace; the default workspace when left out'),
    config: looseObject.describe('the gateway config object (docs/configs.md); the server validates it'),
    status: z.enum(['active', 'archived']).default('active'),
  })
  .strict();

/** A deployment (docs/deployments.md), known by its slug; workspaces and its config by slug. */
const deployment = z
  .object({
    slug: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'a deployment slug is 1–63 lower-case letters, digits and dashes'),
    name: z.string().min(1).max(255),
    type: z.enum(['production', 'non-production']),
    description: z.string().nullable().optional(),
    config: slug.nullable().optional().describe('slug of the config applied to requests that name none'),
    allowed_workspaces: z
      .array(slug)
      .min(1)
      .nullable()
      .optional()
      .describe('slugs of the only workspaces it serves; null: every workspace'),
    rate_limits: z.array(looseObject).nullable().optional(),
    usage_limits: looseObject.nullable().optional(),
  })
  .strict();

const matching = {
  name: z.string().min(1).max(255),
  workspace: slug.optional(),
  conditions: z.array(condition).min(1),
  group_by: z.array(groupBy).min(1),
};

const rateLimitsPolicy = z
  .object({
    ...matching,
    type: z.enum(['requests', 'tokens']).default('requests'),
    unit: z.enum(['rpm', 'rph', 'rpd', 'rpw']),
    value: z.number().min(0),
  })
  .strict();

const usageLimitsPolicy = z
  .object({
    ...matching,
    type: z.enum(['cost', 'tokens']).default('cost'),
    credit_limit: z.number().positive(),
    alert_threshold: z.number().positive().nullable().optional(),
    periodic_reset: z.enum(['weekly', 'monthly']).nullable().optional(),
    periodic_reset_days: z.number().int().min(1).max(365).nullable().optional(),
  })
  .strict();

const apiKey = z
  .object({
    name: z.string().min(1).max(255),
    type: z.enum(['admin', 'workspace-service', 'workspace-user']).default('workspace-service'),
    workspace: slug.optional(),
    user_id: z.uuid().optional(),
    scopes: z.array(z.string().min(1)).default(['completions.write']),
    description: z.string().nullable().optional(),
    expires_at: z.string().nullable().optional(),
    rate_limits: z.array(looseObject).nullable().optional(),
    usage_limits: looseObject.nullable().optional(),
  })
  .strict()
  .refine((key) => key.type !== 'admin' || key.workspace === undefined, {
    message: 'an admin key belongs to no workspace',
    path: ['workspace'],
  });

/**
 * The `svcgw apply` file: what should exist. Workspaces, integrations, providers and configs are
 * known by slug; policies, keys and aliases by name within their workspace (aliases without one are
 * organisation-wide); an integration's models by slug within it; secret references, MCP and agent
 * integrations and servers by slug. Nothing absent from the file is removed.
 */
export const applyFileSchema = z
  .object({
    workspaces: z.array(workspace).default([]),
    secret_references: z.array(secretReferenceEntry).default([]),
    integrations: z.array(integration).default([]),
    providers: z.array(provider).default([]),
    guardrails: z.array(guardrailEntry).default([]),
    configs: z.array(gatewayConfig).default([]),
    deployments: z.array(deployment).default([]),
    policies: z
      .object({
        rate_limits: z.array(rateLimitsPolicy).default([]),
        usage_limits: z.array(usageLimitsPolicy).default([]),
      })
      .strict()
      .default({ rate_limits: [], usage_limits: [] }),
    api_keys: z.array(apiKey).default([]),
    aliases: z.array(alias).default([]),
    ...promptSections,
    ...toolSections,
  })
  .strict();

export type ApplyFile = z.infer<typeof applyFileSchema>;
export type DesiredWorkspace = ApplyFile['workspaces'][number];
export type DesiredIntegration = ApplyFile['integrations'][number];
export type DesiredProvider = ApplyFile['providers'][number];
export type DesiredConfig = ApplyFile['configs'][number];
export type DesiredDeployment = ApplyFile['deployments'][number];
export type DesiredRateLimitsPolicy = ApplyFile['policies']['rate_limits'][number];
export type DesiredUsageLimitsPolicy = ApplyFile['policies']['usage_limits'][number];
export type DesiredApiKey = ApplyFile['api_keys'][number];
export type DesiredAlias = ApplyFile['aliases'][number];
