import { z } from 'zod';
import { idOrSlug, paginationQuery } from '../shared/pagination.js';

export const configStatus = z.enum(['active', 'archived']);
/** Lower-case letters, digits and dashes; never a UUID, so that `:slug` can also take an id. */
export const configSlug = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{0,62}$/,
    'slug is 1–63 lower-case letters, digits and dashes, starting with a letter or digit',
  )
  .refine(
    (slug) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(slug),
    'slug cannot look like an id',
  );
const configName = z.string().min(1).max(255);
/** The config body is checked by parseGatewayConfig so that its failures carry AB01 codes. */
const configBody = z.unknown().optional().describe('The gateway config object (see docs/configs.md).');

export const createConfigBody = z
  .object({
    name: configName,
    slug: configSlug.optional(),
    workspace_id: idOrSlug.optional(),
    config: configBody,
    isDefault: z
      .number()
      .int()
      .refine((value) => value === 0, {
        message:
          'isDefault 1 is not supported: svcgw has no default config per workspace; give an API key a default config with defaults.config_id instead.',
      })
      .optional()
      .describe('Only 0 is taken (see the message of 1).'),
  })
  .strict();

export const updateConfigBody = z
  .object({
    name: configName.optional(),
    config: configBody,
    status: configStatus.optional(),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one field to change' });

export const listConfigsQuery = z
  .object({
    workspace_id: idOrSlug.optional(),
    status: configStatus.default('active'),
    ...paginationQuery,
  })
  .strict();

export const configParams = z.object({ slug: z.string().min(1).max(255) });
export const configVersionParams = z.object({
  slug: z.string().min(1).max(255),
  version: z.string().min(1).max(64).describe('A version number (1, 2, …) or a version id.'),
});

const gatewayConfig = z.record(z.string(), z.unknown());

export const configSummary = z.object({
  id: z.uuid(),
  slug: z.string(),
  name: z.string(),
  status: configStatus,
  workspace_id: z.uuid(),
  organisation_id: z.uuid(),
  version_id: z.uuid(),
  version: z.number().int(),
  created_at: z.string(),
  last_updated_at: z.string(),
  is_default: z.literal(0).describe('Always 0: svcgw has no default config per workspace (API keys name theirs).'),
  owner_id: z.string().optional().describe('The API key that created the config (absent when unknown).'),
  updated_by: z.string().optional().describe('The API key that saved its latest version (absent when unknown).'),
  object: z.literal('config'),
});

export const configObject = configSummary.extend({ config: gatewayConfig });

export const configVersionObject = z.object({
  version_id: z.uuid(),
  version: z.number().int(),
  config_id: z.uuid(),
  slug: z.string(),
  config: gatewayConfig,
  is_latest: z.boolean(),
  created_at: z.string(),
  created_by_key_id: z.string().nullable(),
  object: z.literal('config_version'),
  // The reference's fields of a version item: the config's own, as of now.
  id: z.uuid().describe('The config id (same as config_id).'),
  name: z.string(),
  workspace_id: z.uuid(),
  organisation_id: z.uuid(),
  status: configStatus,
  is_default: z.literal(0),
  owner_id: z.string().optional(),
  updated_by: z.string().optional().describe('The API key that saved this version (absent when unknown).'),
  last_updated_at: z.string(),
  format: z.literal('json'),
});

export type CreateConfigBody = z.infer<typeof createConfigBody>;
export type UpdateConfigBody = z.infer<typeof updateConfigBody>;
export type ListConfigsQuery = z.infer<typeof listConfigsQuery>;
export type ConfigSummary = z.infer<typeof configSummary>;
export type ConfigObject = z.infer<typeof configObject>;
export type ConfigVersionObject = z.infer<typeof configVersionObject>;
