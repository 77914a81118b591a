import { z } from 'zod';
import { idOrSlug, paginationQuery } from '../shared/pagination.js';
import {
  credentialName,
  credentialSlug,
  credentialStatus,
  freeText,
  tagsQuery,
  tagsSchema,
} from '../credentials/schemas.js';
import { credentialLimitFields, credentialLimitUpdateFields, limitObjectFields } from '../credentials/limits.js';

export const createProviderBody = z
  .object({
    name: credentialName,
    integration_id: idOrSlug.describe('Id or slug of an active integration of the organisation.'),
    slug: credentialSlug.optional(),
    note: freeText.nullable().optional(),
    tags: tagsSchema.optional(),
    workspace_id: idOrSlug
      .optional()
      .describe(
        'Workspace (id or slug); a workspace key uses its own, an admin key the default workspace when left out.',
      ),
    ...credentialLimitFields,
  })
  .strict();

export const updateProviderBody = z
  .object({
    name: credentialName.optional(),
    note: freeText.nullable().optional(),
    tags: tagsSchema.optional(),
    ...credentialLimitUpdateFields,
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one field to change' });

export const listProvidersQuery = z
  .object({
    workspace_id: idOrSlug.optional(),
    tags: tagsQuery.optional(),
    status: credentialStatus.default('active'),
    ...paginationQuery,
  })
  .strict();

export const providerParams = z.object({ slug: idOrSlug });
export const providerQuery = z.object({ workspace_id: idOrSlug.optional() }).strict();

export const providerObject = z.object({
  id: z.uuid(),
  organisation_id: z.uuid(),
  workspace_id: z.uuid(),
  integration_id: z.uuid(),
  ai_provider_id: z.string().describe('The provider type of the integration.'),
  slug: z.string(),
  name: z.string(),
  note: z.string().nullable(),
  tags: z.record(z.string(), z.string()),
  status: z
    .enum([...credentialStatus.options, 'expired'])
    .describe('expired: past expires_at (still stored as active).'),
  created_at: z.string(),
  last_updated_at: z.string(),
  last_reset_at: z.string().nullable(),
  ...limitObjectFields,
  object: z.literal('provider'),
});

export const providerRef = z.object({ id: z.uuid(), slug: z.string(), object: z.literal('provider') });

export type CreateProviderBody = z.infer<typeof createProviderBody>;
export type UpdateProviderBody = z.infer<typeof updateProviderBody>;
export type ListProvidersQuery = z.infer<typeof listProvidersQuery>;
export type ProviderObject = z.infer<typeof providerObject>;
