import { z } from 'zod';
import { foldPaging, pagingBothSpellings } from '../shared/pagination.js';

export const orgRole = z.enum(['owner', 'admin', 'member']);
/** The organisation roles the API grants; `owner` is made only at bootstrap. */
export const grantableOrgRole = z.enum(['admin', 'member']);

export const listUsersQuery = z
  .object({
    role: orgRole.optional(),
    email: z.string().min(1).max(320).optional().describe('Exact address, without regard to case.'),
    ...pagingBothSpellings,
  })
  .strict()
  .transform(foldPaging);

export const userParams = z.object({ userId: z.string().min(1).max(64) });

export const updateUserBody = z.object({ role: grantableOrgRole }).strict();

export const userObject = z.object({
  object: z.literal('user'),
  id: z.uuid(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  role: orgRole,
  email: z.string(),
  created_at: z.string(),
  last_updated_at: z.string(),
  workspace_ids: z.array(z.string()),
});

export type ListUsersQuery = z.infer<typeof listUsersQuery>;
export type UpdateUserBody = z.infer<typeof updateUserBody>;
export type UserObject = z.infer<typeof userObject>;
