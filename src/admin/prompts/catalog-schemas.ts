import { z } from 'zod';
import { idOrSlug, paginationQuery } from '../shared/pagination.js';
import { promptSlug } from './schemas.js';

/** Bodies and answers of prompt collections and labels. */

const status = z.enum(['active', 'archived']);

export const createCollectionBody = z
  .object({
    name: z.string().min(1).max(255),
    slug: promptSlug
      .refine((slug) => !slug.startsWith('default-'), 'slugs starting with "default-" name default collections')
      .optional(),
    workspace_id: idOrSlug.optional(),
    parent_collection_id: idOrSlug.nullable().optional(),
  })
  .strict();

export const updateCollectionBody = z.object({ name: z.string().min(1).max(255) }).strict();

export const listCollectionsQuery = z
  .object({
    workspace_id: idOrSlug.optional().describe('Required with an admin key.'),
    search: z.string().max(255).optional(),
    ...paginationQuery,
  })
  .strict();

export const collectionParams = z.object({ collectionId: z.string().min(1).max(255) });

const collectionDetails = z.object({
  child_collections_count: z.number().int(),
  prompts_count: z.number().int(),
  child_collections_last_updated_at: z.string().nullable(),
  prompts_last_updated_at: z.string().nullable(),
});

export const collectionObject = z.object({
  id: z.uuid(),
  name: z.string(),
  slug: z.string(),
  workspace_id: z.uuid(),
  parent_collection_id: z.uuid().nullable(),
  is_default: z.boolean(),
  status,
  created_at: z.string(),
  last_updated_at: z.string(),
  collection_details: collectionDetails,
  object: z.literal('collection'),
});

export const collectionWithChildren = collectionObject.extend({
  child_collections: z.array(
    z.object({
      id: z.uuid(),
      name: z.string(),
      slug: z.string(),
      last_updated_at: z.string(),
      collection_details: collectionDetails,
    }),
  ),
});

/**
 * The reference API's label name rule: not `latest`, `default` or a number, no `@` or spaces
 * (letters, digits, `_` and `-`, and at most one other character). The other character is
 * written as one outside that set, so that the pattern has one way to match: with
 * `[a-zA-Z0-9_-]*[^@\s]?[a-zA-Z0-9_-]*` a long name was split every way (80,000 characters:
 * 11 s), and zod tests the pattern even after the length check failed.
 */
const LABEL_CHARACTERS = String.raw`[a-zA-Z0-9_-]*(?:[^@\sa-zA-Z0-9_-][a-zA-Z0-9_-]*)?`;
export const LABEL_NAME = new RegExp(String.raw`^(?!latest$)(?!default$)(?!\d+$)${LABEL_CHARACTERS}$`);
const NAME_RULE = 'a label name cannot be "latest", "default" or a number, nor hold "@" or spaces';
// The lookaheads are checked apart, so that the OpenAPI pattern stays one every tool can read.
const labelName = z
  .string()
  .min(1)
  .max(64)
  .regex(new RegExp(`^${LABEL_CHARACTERS}$`), NAME_RULE)
  .refine((name) => LABEL_NAME.test(name), NAME_RULE)
  .describe('Not `latest`, `default` or a number; no `@` or spaces.');
const colorCode = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}$/, 'color_code is a colour as #rrggbb')
  .nullable();

export const createLabelBody = z
  .object({
    name: labelName,
    organisation_id: z.uuid().optional(),
    workspace_id: idOrSlug.optional().describe('A workspace label; without it (admin keys) an organisation label.'),
    description: z.string().max(1024).nullable().optional(),
    color_code: colorCode.optional(),
  })
  .strict();

export const updateLabelBody = z
  .object({
    name: labelName.optional(),
    description: z.string().max(1024).nullable().optional(),
    color_code: colorCode.optional(),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one field to change' });

export const listLabelsQuery = z
  .object({
    organisation_id: z.uuid().optional(),
    workspace_id: idOrSlug.optional(),
    search: z.string().max(255).optional(),
    ...paginationQuery,
  })
  .strict();

export const labelParams = z.object({ labelId: z.string().min(1).max(255) });
export const labelQuery = z
  .object({ organisation_id: z.uuid().optional(), workspace_id: idOrSlug.optional() })
  .strict();

export const labelObject = z.object({
  id: z.uuid(),
  name: z.string(),
  description: z.string().nullable(),
  color_code: z.string().nullable(),
  organisation_id: z.uuid(),
  workspace_id: z.uuid().nullable(),
  is_universal: z.boolean(),
  created_at: z.string(),
  last_updated_at: z.string(),
  status,
  object: z.literal('label'),
});

export type CreateCollectionBody = z.infer<typeof createCollectionBody>;
export type ListCollectionsQuery = z.infer<typeof listCollectionsQuery>;
export type CollectionObject = z.infer<typeof collectionObject>;
export type CollectionWithChildren = z.infer<typeof collectionWithChildren>;
export type CreateLabelBody = z.infer<typeof createLabelBody>;
export type UpdateLabelBody = z.infer<typeof updateLabelBody>;
export type ListLabelsQuery = z.infer<typeof listLabelsQuery>;
export type LabelObject = z.infer<typeof labelObject>;
