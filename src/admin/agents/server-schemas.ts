import { z } from 'zod';
import { idOrSlug } from '../shared/pagination.js';
import { agentSlug, agentStatus, authType, skillObject, userAccessDefault } from './schemas.js';

export const createServerBody = z
  .object({
    name: z.string().min(1).max(255),
    agent_integration_id: idOrSlug.describe('The agent integration (id or slug) this server is an instance of.'),
    workspace_id: idOrSlug
      .optional()
      .describe("Required with an admin key; a workspace key's own workspace otherwise."),
    slug: agentSlug
      .optional()
      .describe('Names the server in its gateway URL, /v1/agents/{slug}; unique in the organisation, fixed once made.'),
    description: z.string().max(2048).optional(),
    default_user_access: userAccessDefault
      .default('allow')
      .describe("Users' access when they have no override of their own."),
  })
  .strict();

export const updateServerBody = z
  .object({
    name: z.string().min(1).max(255).optional(),
    description: z.string().max(2048).nullable().optional(),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one field to change' });

export const listServersQuery = z
  .object({
    workspace_id: idOrSlug.optional(),
    agent_integration_id: idOrSlug.optional(),
    status: agentStatus.default('active'),
    search: z.string().min(1).max(255).optional().describe('Part of the name or slug.'),
    page_size: z.coerce.number().int().min(1).max(1000).default(100).describe('Items per page (1 to 1000).'),
    current_page: z.coerce.number().int().min(0).default(0).describe('0-based page number.'),
  })
  .strict();

export const serverObject = z.object({
  id: z.uuid(),
  name: z.string(),
  slug: z.string(),
  description: z.string().nullable(),
  status: agentStatus,
  organisation_id: z.uuid(),
  workspace_id: z.uuid(),
  workspace_slug: z.string(),
  workspace_name: z.string(),
  agent_integration_id: z.uuid(),
  agent_integration_slug: z.string(),
  agent_integration_name: z.string(),
  agent_integration_url: z.string(),
  auth_type: authType,
  default_user_access: userAccessDefault,
  /** Where clients reach it: the gateway URL (JSON-RPC) and its card. */
  url: z.string(),
  card_url: z.string(),
  owner_id: z.string(),
  updated_by: z.string().nullable(),
  created_at: z.string(),
  last_updated_at: z.string(),
  object: z.literal('agent_server'),
});

export const testObject = z.object({
  success: z.boolean(),
  status_code: z.number().int().nullable(),
  response_time_ms: z.number(),
  url: z.string(),
  agent_name: z.string().nullable(),
  skills_count: z.number().int().nullable(),
  error: z.string().nullable(),
});

export const serverSkillObject = skillObject.extend({
  /** The switch on the integration; a skill is served only when both are on. */
  integration_enabled: z.boolean(),
});

export const userAccessObject = z.object({
  object: z.literal('list'),
  total: z.number().int(),
  data: z.array(
    z.object({
      user_id: z.uuid(),
      email: z.string(),
      first_name: z.string().nullable(),
      last_name: z.string().nullable(),
      enabled: z.boolean(),
      has_override: z.boolean(),
    }),
  ),
  default_user_access: userAccessDefault,
});

export const userAccessBody = z
  .object({
    user_access: z
      .array(
        z
          .object({
            user_id: z.uuid(),
            enabled: z.boolean().nullable().describe('null removes the override: the default applies again.'),
          })
          .strict(),
      )
      .max(1000)
      .default([]),
    default_user_access: userAccessDefault.optional(),
  })
  .strict()
  .refine((body) => body.user_access.length > 0 || body.default_user_access !== undefined, {
    message: 'send user_access entries, default_user_access, or both',
  });

export type CreateServerBody = z.infer<typeof createServerBody>;
export type UpdateServerBody = z.infer<typeof updateServerBody>;
export type ListServersQuery = z.infer<typeof listServersQuery>;
export type ServerObject = z.infer<typeof serverObject>;
export type TestObject = z.infer<typeof testObject>;
export type ServerSkillObject = z.infer<typeof serverSkillObject>;
export type UserAccessObject = z.infer<typeof userAccessObject>;
export type UserAccessBody = z.infer<typeof userAccessBody>;
