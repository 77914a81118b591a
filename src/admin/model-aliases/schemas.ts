import { z } from 'zod';
import { isUuid } from '../../lib/ids.js';
import { idOrSlug, paginationQuery } from '../shared/pagination.js';

/** What a client sends as `model`: no `@` first (that is `@slug/model`), not an id. */
export const aliasName = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]*$/, 'an alias name takes letters, digits and . _ : / - (not @ first)')
  .refine((name) => !isUuid(name), { message: 'an alias name must not have the form of a UUID' });

const target = {
  model: z
    .string()
    .min(3)
    .max(512)
    .regex(/^@[a-zA-Z0-9_-]+\/.+$/, 'model is @<provider slug>/<model>')
    .optional()
    .describe('`@<provider slug>/<model>`: the stored provider and the model it is sent.'),
  config_id: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe("Slug or id of an active config of the alias's workspace; its targets set override_params.model."),
};

export const createAliasBody = z
  .object({
    name: aliasName,
    ...target,
    workspace_id: idOrSlug
      .nullable()
      .optional()
      .describe(
        "The alias's workspace. Left out: a workspace key's own workspace, or organisation-wide for an admin key; null: organisation-wide.",
      ),
    description: z.string().max(1024).nullable().optional(),
  })
  .strict()
  .refine((body) => (body.model === undefined) !== (body.config_id === undefined), {
    message: 'an alias names exactly one of model and config_id',
    path: ['model'],
  });

export const updateAliasBody = z
  .object({ ...target, description: z.string().max(1024).nullable().optional() })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one field to change' })
  .refine((body) => body.model === undefined || body.config_id === undefined, {
    message: 'an alias names exactly one of model and config_id',
    path: ['model'],
  });

export const aliasParams = z.object({ alias: z.string().min(1).max(255) });

export const aliasScopeQuery = z
  .object({
    workspace_id: idOrSlug
      .optional()
      .describe(
        "The alias's workspace when it is named by name; left out: the key's workspace, else organisation-wide.",
      ),
  })
  .strict();

export const listAliasesQuery = z
  .object({
    workspace_id: idOrSlug.optional().describe("One workspace's aliases and the organisation's it sees."),
    ...paginationQuery,
  })
  .strict();

export const aliasObject = z.object({
  id: z.uuid(),
  name: z.string(),
  model: z.string().nullable(),
  config_id: z.string().nullable(),
  workspace_id: z.string().nullable().describe('Null for an organisation-wide alias.'),
  organisation_id: z.uuid(),
  description: z.string().nullable(),
  created_at: z.string(),
  last_updated_at: z.string(),
  object: z.literal('model-alias'),
});

export type CreateAliasBody = z.infer<typeof createAliasBody>;
export type UpdateAliasBody = z.infer<typeof updateAliasBody>;
export type AliasObject = z.infer<typeof aliasObject>;
