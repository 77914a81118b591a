import { z } from 'zod';
import { idOrSlug, paginationQuery } from '../shared/pagination.js';

/**
 * Bodies and answers of the SCIM administration routes: SCIM tokens (svcgw's paths) and the
 * group → workspace mappings (`/v1/scim/workspaces`, with the reference API's fields and shapes).
 */

export const createScimTokenBody = z
  .object({
    name: z.string().min(1).max(255).describe('What the token is for (the identity provider it is given to).'),
    expires_at: z.iso
      .datetime({ offset: true })
      .nullable()
      .optional()
      .describe('When the token stops working; never, when left out.'),
  })
  .strict();

export const scimTokenParams = z.object({ tokenId: z.string().min(1).max(64) });

export const listScimTokensQuery = z.object({ ...paginationQuery }).strict();

export const scimTokenObject = z.object({
  object: z.literal('scim_token'),
  id: z.uuid(),
  name: z.string(),
  token_hint: z.string().describe('The first and last characters of the token, to recognise it by.'),
  status: z.enum(['active', 'revoked']),
  expires_at: z.string().nullable(),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
});

export const issuedScimToken = scimTokenObject.extend({
  token: z.string().describe('The token itself, shown only in this response; only its hash is stored.'),
});

export const mappingRole = z.enum(['admin', 'member', 'manager']);

export const listMappingsQuery = z
  .object({
    workspace_id: idOrSlug.optional(),
    scim_group_id: z.string().min(1).max(64).optional(),
    role: mappingRole.optional(),
  })
  .strict();

export const createMappingBody = z
  .object({
    workspace_id: idOrSlug.describe('The workspace (id or slug) the group grants.'),
    role: mappingRole.describe("The members' role in the workspace."),
    scim_group_id: z.string().min(1).max(64).optional().describe('The id of a SCIM group.'),
    scim_group_name: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe('The displayName of a SCIM group; it may not exist yet (linked when the provider pushes it).'),
  })
  .strict()
  .refine((body) => (body.scim_group_id === undefined) !== (body.scim_group_name === undefined), {
    message: 'Give exactly one of scim_group_id and scim_group_name.',
    path: ['scim_group_id'],
  });

export const mappingParams = z.object({ scimWorkspaceGroupId: z.string().min(1).max(64) });

export const mappingObject = z.object({
  id: z.uuid(),
  workspace_id: z.string(),
  scim_group: z.string().describe('The name of the group.'),
  scim_group_id: z.string().nullable().describe('Null while no group of that name has been pushed.'),
  role: mappingRole,
});

export type CreateScimTokenBody = z.infer<typeof createScimTokenBody>;
export type ScimTokenObject = z.infer<typeof scimTokenObject>;
export type ListMappingsQuery = z.infer<typeof listMappingsQuery>;
export type CreateMappingBody = z.infer<typeof createMappingBody>;
export type MappingObject = z.infer<typeof mappingObject>;
