import { z } from 'zod';
import { idOrSlug, paginationQuery } from '../shared/pagination.js';

export const workspaceRole = z.enum(['admin', 'manager', 'member']);

export const membersParams = z.object({ workspaceId: idOrSlug });
export const memberParams = z.object({ workspaceId: idOrSlug, userId: z.string().min(1).max(64) });

export const listMembersQuery = z
  .object({
    role: workspaceRole.optional(),
    email: z.string().min(1).max(320).optional().describe('Exact address, without regard to case.'),
    ...paginationQuery,
  })
  .strict();

export const addMembersBody = z
  .object({
    users: z
      .array(z.object({ id: z.uuid(), role: workspaceRole }).strict())
      .min(1)
      .max(100),
  })
  .strict();

export const updateMemberBody = z.object({ role: workspaceRole }).strict();

export const memberObject = z.object({
  object: z.literal('workspace-user'),
  id: z.uuid().describe('The user id.'),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  org_role: z.enum(['owner', 'admin', 'member']),
  role: workspaceRole,
  email: z.string(),
  workspace_id: z.uuid(),
  created_at: z.string().describe('When the user joined the workspace.'),
  last_updated_at: z.string().describe('When the membership last changed.'),
  status: z.literal('active'),
  scopes: z
    .array(z.string())
    .describe("What the member's role lets a key of theirs do in the workspace: the scopes their first key gets."),
  settings: z.null().describe('Always null: svcgw keeps no per-member settings.'),
});

export type ListMembersQuery = z.infer<typeof listMembersQuery>;
export type AddMembersBody = z.infer<typeof addMembersBody>;
export type UpdateMemberBody = z.infer<typeof updateMemberBody>;
export type MemberObject = z.infer<typeof memberObject>;
