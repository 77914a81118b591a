import { z } from 'zod';
import { idOrSlug, paginationQuery } from '../shared/pagination.js';

/**
 * Bodies and answers of prompts and prompt partials, with the reference API's field names.
 * Lists use the one list shape of svcgw ({object: "list", total, data}), versions included.
 */

const UUID_LIKE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Lower-case letters, digits and dashes; never a UUID or `partials`, so that a path segment can take either. */
export const promptSlug = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{0,62}$/,
    'slug is 1–63 lower-case letters, digits and dashes, starting with a letter or digit',
  )
  .refine((slug) => !UUID_LIKE.test(slug), 'slug cannot look like an id')
  .refine((slug) => slug !== 'partials', 'slug cannot be "partials"');

const MAX_TEMPLATE = 200_000;
const name = z.string().min(1).max(255);
const template = z.string().min(1).max(MAX_TEMPLATE).describe('The Mustache template (see docs/prompts.md).');
const jsonObject = z.record(z.string(), z.unknown());
const rawFlag = z
  .union([z.boolean(), z.literal(0), z.literal(1)])
  .transform((value) => value === true || value === 1)
  .describe('1 (or true): the text is a completion prompt, not chat messages.');

/** The fields of one prompt version; each may be null to leave it unset. */
const versionFields = {
  string: template,
  parameters: jsonObject.nullable().describe('Model parameters (temperature, max_tokens, response_format, …).'),
  model: z.string().min(1).max(255).nullable(),
  virtual_key: z
    .string()
    .min(1)
    .max(255)
    .nullable()
    .describe('The provider that runs the prompt: a provider slug (`@slug` or `slug`) or a virtual key slug.'),
  config_id: idOrSlug.nullable().describe('A stored config of the same workspace that routes the prompt (svcgw).'),
  functions: z.array(z.unknown()).nullable(),
  tools: z.array(z.unknown()).nullable(),
  tool_choice: z.unknown(),
  template_metadata: jsonObject.nullable(),
  is_raw_template: rawFlag,
  version_description: z.string().max(1024).nullable(),
};

export const createPromptBody = z
  .object({
    name,
    slug: promptSlug.optional(),
    collection_id: idOrSlug
      .optional()
      .describe("UUID or slug of the collection; the workspace's default one when left out."),
    workspace_id: idOrSlug.optional(),
    string: versionFields.string,
    parameters: versionFields.parameters.optional(),
    model: versionFields.model.optional(),
    virtual_key: versionFields.virtual_key.optional(),
    config_id: versionFields.config_id.optional(),
    functions: versionFields.functions.optional(),
    tools: versionFields.tools.optional(),
    tool_choice: versionFields.tool_choice.optional(),
    template_metadata: versionFields.template_metadata.optional(),
    is_raw_template: versionFields.is_raw_template.optional(),
    version_description: versionFields.version_description.optional(),
  })
  .strict();

export const updatePromptBody = z
  .object({
    patch: z
      .boolean()
      .optional()
      .describe('true: version fields left out are taken from the latest version (else they are unset).'),
    name: name.optional(),
    collection_id: idOrSlug.optional(),
    string: versionFields.string.optional(),
    parameters: versionFields.parameters.optional(),
    model: versionFields.model.optional(),
    virtual_key: versionFields.virtual_key.optional(),
    config_id: versionFields.config_id.optional(),
    functions: versionFields.functions.optional(),
    tools: versionFields.tools.optional(),
    tool_choice: versionFields.tool_choice.optional(),
    template_metadata: versionFields.template_metadata.optional(),
    prompt_metadata: versionFields.template_metadata.optional().describe('Another name of template_metadata.'),
    is_raw_template: versionFields.is_raw_template.optional(),
    version_description: versionFields.version_description.optional(),
  })
  .strict()
  .refine((body) => Object.keys(body).some((key) => key !== 'patch'), {
    message: 'send at least one field to change',
  });

export const listPromptsQuery = z
  .object({
    collection_id: idOrSlug.optional(),
    workspace_id: idOrSlug.optional(),
    search: z.string().max(255).optional(),
    status: z.enum(['active', 'archived']).default('active'),
    ...paginationQuery,
  })
  .strict();

export const promptParams = z.object({ promptId: z.string().min(1).max(255) });
export const promptVersionParams = z.object({
  promptId: z.string().min(1).max(255),
  versionId: z.string().min(1).max(64).describe('A version id or number.'),
});
export const makeDefaultBody = z.object({ version: z.number().int().min(1) }).strict();
export const versionLabelBody = z
  .object({
    label_id: z
      .string()
      .min(1)
      .max(255)
      .nullable()
      .describe('A label id or name the workspace sees; null takes the label off.'),
  })
  .strict();

const status = z.enum(['active', 'archived']);

export const promptSummary = z.object({
  id: z.uuid(),
  slug: z.string(),
  name: z.string(),
  collection_id: z.uuid(),
  workspace_id: z.uuid(),
  model: z.string().nullable(),
  status,
  created_at: z.string(),
  last_updated_at: z.string(),
  object: z.literal('prompt'),
});

export const promptObject = z.object({
  id: z.uuid(),
  slug: z.string(),
  name: z.string(),
  collection_id: z.uuid(),
  workspace_id: z.uuid(),
  string: z.string(),
  parameters: jsonObject.nullable(),
  prompt_version: z.number().int(),
  prompt_version_id: z.uuid(),
  prompt_version_status: status,
  prompt_version_description: z.string().nullable(),
  prompt_version_label_id: z.uuid().nullable(),
  is_default_version: z.boolean(),
  virtual_key: z.string().nullable(),
  config_id: z.string().nullable(),
  model: z.string().nullable(),
  functions: z.array(z.unknown()).nullable(),
  tools: z.array(z.unknown()).nullable(),
  tool_choice: z.unknown(),
  template_metadata: jsonObject.nullable(),
  is_raw_template: z.boolean(),
  status,
  created_at: z.string(),
  last_updated_at: z.string(),
  object: z.literal('prompt'),
});

export const promptVersionSummary = z.object({
  id: z.uuid(),
  prompt_id: z.uuid(),
  prompt_template: z.string(),
  prompt_version: z.number().int(),
  prompt_description: z.string().nullable(),
  label_id: z.uuid().nullable(),
  is_default: z.boolean(),
  created_at: z.string(),
  status,
  object: z.literal('prompt'),
});

// ---- partials ----

export const createPartialBody = z
  .object({
    name,
    slug: promptSlug.optional(),
    string: template,
    workspace_id: idOrSlug.optional(),
    collection_id: idOrSlug.optional(),
    version_description: z.string().max(1024).optional(),
  })
  .strict();

export const updatePartialBody = z
  .object({
    name: name.optional(),
    string: template.optional(),
    description: z.string().max(1024).optional().describe('The description of the new version.'),
    status: status.optional(),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one field to change' });

export const listPartialsQuery = z
  .object({
    collection_id: idOrSlug.optional(),
    workspace_id: idOrSlug.optional(),
    search: z.string().max(255).optional(),
    status: status.default('active'),
    ...paginationQuery,
  })
  .strict();

export const partialParams = z.object({ promptPartialId: z.string().min(1).max(255) });
export const partialVersionParams = z.object({
  promptPartialId: z.string().min(1).max(255),
  versionId: z.string().min(1).max(64).describe('A version id or number.'),
});

export const partialSummary = z.object({
  id: z.uuid(),
  slug: z.string(),
  name: z.string(),
  collection_id: z.uuid(),
  workspace_id: z.uuid(),
  created_at: z.string(),
  last_updated_at: z.string(),
  status,
  object: z.literal('partial'),
});

export const partialObject = partialSummary.extend({
  string: z.string(),
  version: z.number().int(),
  version_description: z.string().nullable(),
  prompt_partial_version_id: z.uuid(),
});

export const partialVersionObject = z.object({
  prompt_partial_id: z.uuid(),
  prompt_partial_version_id: z.uuid(),
  slug: z.string(),
  version: z.number().int(),
  string: z.string(),
  description: z.string().nullable(),
  label_id: z.uuid().nullable(),
  is_default: z.boolean(),
  created_at: z.string(),
  prompt_version_status: status,
  object: z.literal('partial'),
});

export type CreatePromptBody = z.infer<typeof createPromptBody>;
export type UpdatePromptBody = z.infer<typeof updatePromptBody>;
export type ListPromptsQuery = z.infer<typeof listPromptsQuery>;
export type PromptObject = z.infer<typeof promptObject>;
export type PromptSummary = z.infer<typeof promptSummary>;
export type PromptVersionSummary = z.infer<typeof promptVersionSummary>;
export type CreatePartialBody = z.infer<typeof createPartialBody>;
export type UpdatePartialBody = z.infer<typeof updatePartialBody>;
export type ListPartialsQuery = z.infer<typeof listPartialsQuery>;
export type PartialObject = z.infer<typeof partialObject>;
export type PartialSummary = z.infer<typeof partialSummary>;
export type PartialVersionObject = z.infer<typeof partialVersionObject>;
