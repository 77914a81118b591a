import { z } from 'zod';
import { paginationQuery } from '../shared/pagination.js';

/** 900 seconds is the spec's minimum; a year the most that is useful to say. */
export const MAX_SESSION_TTL_LIMIT = 31_536_000;

export const sessionSettingsBody = z
  .object({
    session_settings: z
      .object({
        max_session_ttl: z
          .number()
          .int()
          .min(900)
          .max(MAX_SESSION_TTL_LIMIT)
          .nullable()
          .describe(
            'Seconds (at least 900): sessions older than this are refused with SESSION_EXPIRED, also those opened before it was set; new sessions last this long. null: the default (86400).',
          ),
      })
      .strict(),
  })
  .strict();

export const sessionSettingsObject = z.object({
  object: z.literal('session_settings'),
  organisation_id: z.string(),
  session_settings: z.object({ max_session_ttl: z.number().nullable() }),
  session_ttl: z.number().describe('How long a new session lasts, in seconds (max_session_ttl or the default).'),
  last_updated_at: z.string().nullable(),
});

export const sessionObject = z.object({
  object: z.literal('session'),
  id: z.uuid(),
  user_id: z.string(),
  workspace_id: z
    .string()
    .nullable()
    .describe(
      'The workspace a member’s session acts in, fixed at sign-in (null for owners and admins: the organisation).',
    ),
  identity_provider: z.enum(['oidc', 'saml']),
  subject: z.string().nullable().describe('Who the identity provider said signed in (OIDC sub, SAML NameID).'),
  client: z.string().nullable(),
  client_ip: z.string().nullable(),
  status: z.enum(['active', 'expired', 'revoked']),
  created_at: z.string(),
  expires_at: z.string().describe('When it expires at the latest; max_session_ttl can end it sooner.'),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  end_reason: z.string().nullable().describe('logout, revoked (by an admin) or user_removed.'),
});

export const listSessionsQuery = z
  .object({
    user_id: z.uuid().optional().describe('Only the sessions of this user.'),
    status: z.enum(['active', 'expired', 'revoked']).optional(),
    ...paginationQuery,
  })
  .strict();

export const sessionParams = z.object({ sessionId: z.string().min(1).max(64) });

export type SessionSettingsBody = z.infer<typeof sessionSettingsBody>;
export type SessionObject = z.infer<typeof sessionObject>;
export type ListSessionsQuery = z.infer<typeof listSessionsQuery>;
