import { z } from 'zod';
import { idOrSlug, paginationQuery } from '../shared/pagination.js';
import { secretMappingsField, storedMappingsObject } from '../secret-references/mappings.js';
import {
  configurationsSchema,
  credentialName,
  credentialSlug,
  credentialStatus,
  freeText,
  providerKey,
  providerTypeId,
  tagsQuery,
  tagsSchema,
} from '../credentials/schemas.js';

export const createIntegrationBody = z
  .object({
    name: credentialName,
    slug: credentialSlug.optional(),
    ai_provider_id: providerTypeId.describe('A provider id of the registry, such as openai or azure-openai.'),
    key: providerKey.optional().describe('The provider API key; stored encrypted and never shown again.'),
    description: freeText.nullable().optional(),
    configurations: configurationsSchema.optional(),
    tags: tagsSchema.optional(),
    workspace_id: idOrSlug
      .optional()
      .describe('Workspace (id or slug) of the default provider; the default workspace when left out.'),
    create_default_provider: z.boolean().default(true),
    default_provider_slug: credentialSlug.optional(),
    secret_mappings: secretMappingsField.optional(),
  })
  .strict();

export const updateIntegrationBody = z
  .object({
    name: credentialName.optional(),
    description: freeText.nullable().optional(),
    key: providerKey.nullable().optional().describe('A new provider key (null removes it).'),
    configurations: configurationsSchema
      .optional()
      .describe('Replaces the stored object. A secret field sent back as its mask keeps its stored value.'),
    tags: tagsSchema.optional(),
    secret_mappings: secretMappingsField.optional().describe('Replaces the stored mappings ([] removes them all).'),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one field to change' });

export const listIntegrationsQuery = z
  .object({
    tags: tagsQuery.optional(),
    status: credentialStatus.default('active'),
    ...paginationQuery,
  })
  .strict();

export const integrationParams = z.object({ slug: idOrSlug });

export const integrationObject = z.object({
  id: z.uuid(),
  organisation_id: z.uuid(),
  slug: z.string(),
  name: z.string(),
  ai_provider_id: z.string(),
  description: z.string().nullable(),
  masked_key: z.string().nullable().describe('The key masked (sk-p****abcd); the key itself is never returned.'),
  configurations: z.record(z.string(), z.unknown()),
  tags: z.record(z.string(), z.string()),
  status: credentialStatus,
  created_at: z.string(),
  last_updated_at: z.string(),
  last_reset_at: z.string().nullable(),
  allow_all_models: z
    .boolean()
    .describe(
      'Whether models not disabled in GET /v1/integrations/{slug}/models are allowed (true), or only those enabled there.',
    ),
  secret_mappings: storedMappingsObject,
  object: z.literal('integration'),
});

/** GET /v1/integrations/{slug}: the object with the reference's detail fields. */
export const integrationDetailObject = integrationObject.extend({
  global_workspace_access_settings: z
    .object({ enabled: z.boolean() })
    .describe(
      'Whether workspaces without a setting of their own may use it (see GET /v1/integrations/{slug}/workspaces).',
    ),
  workspace_count: z.number().int().describe('How many active workspaces may use it.'),
  pricing_adjustments: z.null().describe('Always null: svcgw does not adjust prices per integration.'),
});

export type CreateIntegrationBody = z.infer<typeof createIntegrationBody>;
export type UpdateIntegrationBody = z.infer<typeof updateIntegrationBody>;
export type ListIntegrationsQuery = z.infer<typeof listIntegrationsQuery>;
export type IntegrationObject = z.infer<typeof integrationObject>;
export type IntegrationDetailObject = z.infer<typeof integrationDetailObject>;
