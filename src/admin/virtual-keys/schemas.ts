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
} from '../credentials/schemas.js';
import { credentialLimitFields, credentialLimitUpdateFields, limitObjectFields } from '../credentials/limits.js';
import { camelSettingFields } from './camel-fields.js';

export const createVirtualKeyBody = z
  .object({
    name: credentialName,
    provider: providerTypeId.describe('A provider id of the registry, such as openai or azure-openai.'),
    key: providerKey
      .optional()
      .describe(
        'The provider API key; stored encrypted and never shown again. Required unless secret_mappings maps key.',
      ),
    note: freeText.nullable().optional(),
    slug: credentialSlug.optional(),
    workspace_id: idOrSlug
      .optional()
      .describe(
        'Workspace (id or slug); a workspace key uses its own, an admin key the default workspace when left out.',
      ),
    configurations: configurationsSchema.optional(),
    secret_mappings: secretMappingsField.optional(),
    ...credentialLimitFields,
    ...camelSettingFields,
  })
  .strict();

export const updateVirtualKeyBody = z
  .object({
    name: credentialName.optional(),
    note: freeText.nullable().optional(),
    key: providerKey.optional(),
    configurations: configurationsSchema
      .optional()
      .describe('Replaces the stored object. A secret field sent back as its mask keeps its stored value.'),
    secret_mappings: secretMappingsField.optional().describe('Replaces the stored mappings ([] removes them all).'),
    ...credentialLimitUpdateFields,
    ...camelSettingFields,
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one field to change' });

export const listVirtualKeysQuery = z
  .object({
    workspace_id: idOrSlug.optional(),
    status: credentialStatus.default('active'),
    ...paginationQuery,
  })
  .strict();

export const virtualKeyParams = z.object({ slug: idOrSlug });

export const virtualKeyObject = z.object({
  id: z.uuid(),
  organisation_id: z.uuid(),
  workspace_id: z.uuid(),
  slug: z.string(),
  name: z.string(),
  provider: z.string(),
  note: z.string().nullable(),
  masked_key: z.string().nullable().describe('The key masked (sk-p****abcd); the key itself is never returned.'),
  configurations: z.record(z.string(), z.unknown()),
  model_config: z
    .record(z.string(), z.unknown())
    .describe("The reference's name for configurations: the same object, secret fields masked."),
  status: z
    .enum([...credentialStatus.options, 'expired'])
    .describe('expired: past expires_at (still stored as active).'),
  created_at: z.string(),
  last_updated_at: z.string(),
  last_reset_at: z.string().nullable(),
  secret_mappings: storedMappingsObject,
  ...limitObjectFields,
  object: z.literal('virtual-key'),
});

export type CreateVirtualKeyBody = z.infer<typeof createVirtualKeyBody>;
export type UpdateVirtualKeyBody = z.infer<typeof updateVirtualKeyBody>;
export type ListVirtualKeysQuery = z.infer<typeof listVirtualKeysQuery>;
export type VirtualKeyObject = z.infer<typeof virtualKeyObject>;
