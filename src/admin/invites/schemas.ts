import { z } from 'zod';
import { workspaceRole } from '../members/schemas.js';
import { foldPaging, idOrSlug, pagingBothSpellings } from '../shared/pagination.js';
import { userObject } from '../users/schemas.js';

export const inviteRole = z.enum(['admin', 'member']);
/** An invite's state as answered: `cancelled` (the reference's word) is an invite revoked by DELETE. */
export const inviteStatus = z.enum(['pending', 'accepted', 'cancelled', 'expired']);
const expiresInDays = z.number().int().min(1).max(30).describe('Days until the invite expires (1 to 30, default 7).');

export const createInviteBody = z
  .object({
    email: z.email().max(320),
    role: inviteRole.describe('Organisation role of the new user.'),
    workspaces: z
      .array(z.object({ id: idOrSlug.describe('Workspace id or slug.'), role: workspaceRole }).strict())
      .max(100)
      .optional()
      .describe('Required (at least one) when role is member; the first one gets the new user’s first API key.'),
    expires_in_days: expiresInDays.default(7),
    workspace_api_key_details: z
      .object({
        scopes: z.array(z.string().min(1).max(128)).min(1).max(200),
        name: z.string().min(1).max(255).optional(),
      })
      .strict()
      .optional()
      .describe(
        "The invitee's first workspace key (members only): its scopes (workspace scopes) and name, instead of the scopes of their role.",
      ),
  })
  .strict();

export const resendInviteBody = z.object({ expires_in_days: expiresInDays.optional() }).strict().nullish();

export const listInvitesQuery = z
  .object({
    status: z
      .enum(['pending', 'accepted', 'cancelled', 'revoked', 'expired'])
      .optional()
      .describe('`revoked` is taken as another word for `cancelled`.'),
    email: z.string().min(1).max(320).optional().describe('Exact address, without regard to case.'),
    role: inviteRole.optional(),
    ...pagingBothSpellings,
  })
  .strict()
  .transform(foldPaging);

export const inviteParams = z.object({ inviteId: z.string().min(1).max(64) });

export const inviteObject = z.object({
  object: z.literal('invite'),
  id: z.uuid(),
  email: z.string(),
  role: inviteRole,
  workspaces: z.array(z.object({ workspace_id: z.uuid(), role: workspaceRole })),
  status: inviteStatus.describe('`expired` is a pending invite past expires_at.'),
  invited_by: z.string().nullable().describe('User id of the inviter.'),
  created_at: z.string(),
  last_updated_at: z.string(),
  expires_at: z.string(),
  accepted_at: z.string().nullable(),
  cancelled_at: z.string().nullable().describe('When the invite was cancelled (DELETE), or null.'),
});

export const issuedInvite = z.object({
  object: z.literal('invite'),
  id: z.uuid(),
  invite_link: z.string().describe('Carries the one-time token; shown only in this response.'),
  token: z.string().describe('The one-time token of invite_link, for POST /v1/invites/accept.'),
  expires_at: z.string(),
});

export const resentInvite = issuedInvite.extend({
  inviteLink: z.string().describe('Same as invite_link (the name the reference gateway uses on resend).'),
});

export const acceptInviteBody = z
  .object({
    token: z.string().min(1).max(512),
    first_name: z.string().min(1).max(255).optional(),
    last_name: z.string().min(1).max(255).optional(),
  })
  .strict();

export const acceptedInvite = z.object({
  user: userObject,
  api_key: z.string().describe('The new user’s first API key, shown only in this response.'),
  api_key_id: z.uuid(),
});

export type CreateInviteBody = z.infer<typeof createInviteBody>;
export type ResendInviteBody = z.infer<typeof resendInviteBody>;
export type ListInvitesQuery = z.infer<typeof listInvitesQuery>;
export type InviteObject = z.infer<typeof inviteObject>;
export type AcceptInviteBody = z.infer<typeof acceptInviteBody>;
