import { z } from 'zod';
import { AGENT_AUTH_TYPES, HEADER_NAME, HEADER_VALUE, RESERVED_HEADERS } from '../../agents/upstream-auth.js';
import { REDACTED } from '../../lib/redact.js';
import { idOrSlug } from '../shared/pagination.js';

/** Lower-case letters, digits and dashes; never a UUID, so that `:id` can also take a slug. */
export const agentSlug = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{1,62}$/,
    'slug is 2–63 lower-case letters, digits and dashes, starting with a letter or digit',
  )
  .refine(
    (slug) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(slug),
    'slug cannot look like an id',
  );

export const agentStatus = z.enum(['active', 'archived']);
export const authType = z.enum(AGENT_AUTH_TYPES);
export const userAccessDefault = z.enum(['allow', 'deny']);

/** An http(s) URL without credentials in it: those go in `configurations`, sealed. */
export const agentUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
  .max(2048)
  // Refinements run on values the format check refused too: an unparsable URL is left to that check.
  .refine(
    (url) => {
      if (!URL.canParse(url)) return true;
      const parsed = new URL(url);
      return parsed.username === '' && parsed.password === '';
    },
    { message: 'put credentials in configurations (custom_headers or bearer_token), not in the URL' },
  );

/** Custom headers sent on every call to the agent; values are secrets (`[REDACTED]` keeps the stored one). */
const customHeaders = z.record(z.string(), z.string()).superRefine((headers, ctx) => {
  const names = Object.keys(headers);
  if (names.length > 32) ctx.addIssue({ code: 'custom', message: 'at most 32 custom headers' });
  for (const name of names) {
    if (!HEADER_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'not an HTTP header name' });
    else if (RESERVED_HEADERS.has(name.toLowerCase()))
      ctx.addIssue({ code: 'custom', path: [name], message: `${name} is set by svcgw and cannot be a custom header` });
    if (!HEADER_VALUE.test(headers[name]!))
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: 'header values are at most 8192 characters, without line breaks',
      });
  }
});

export const configurations = z
  .object({
    custom_headers: customHeaders.optional().describe('With auth_type `headers`: sent on every call to the agent.'),
    bearer_token: z
      .string()
      .min(1)
      .max(8192)
      .regex(HEADER_VALUE, 'no line breaks')
      .optional()
      .describe('With auth_type `bearer`: sent as Authorization: Bearer <token>.'),
  })
  .strict();

export const createIntegrationBody = z
  .object({
    name: z.string().min(1).max(255),
    slug: agentSlug.optional(),
    description: z.string().max(2048).optional(),
    url: agentUrl.describe(
      "The agent's base URL (its card is at {url}/.well-known/agent-card.json) or its card's URL (…json).",
    ),
    rpc_url: agentUrl
      .optional()
      .describe(
        "The agent's JSON-RPC endpoint, when it is not the one its card names (a card behind a proxy, another origin).",
      ),
    auth_type: authType.default('none'),
    configurations: configurations.optional(),
    workspace_id: idOrSlug
      .optional()
      .describe('Make it a workspace integration; without it an admin key makes an organisation integration.'),
    organisation_id: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe("Accepted for compatibility; must be the caller's organisation."),
    global_workspace_access: z
      .boolean()
      .optional()
      .describe('Organisation integrations: usable in every workspace (default false: enable workspaces one by one).'),
  })
  .strict();

export const updateIntegrationBody = z
  .object({
    name: z.string().min(1).max(255).optional(),
    description: z.string().max(2048).nullable().optional(),
    url: agentUrl.optional(),
    rpc_url: agentUrl.nullable().optional(),
    auth_type: authType.optional(),
    configurations: configurations.optional(),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one field to change' });

const page = {
  page_size: z.coerce.number().int().min(1).max(1000).default(100).describe('Items per page (1 to 1000).'),
  current_page: z.coerce.number().int().min(0).default(0).describe('0-based page number.'),
};

export const listIntegrationsQuery = z
  .object({
    workspace_id: idOrSlug
      .optional()
      .describe('Integrations usable in this workspace: its own and those enabled for it.'),
    organisation_id: z.string().min(1).max(255).optional(),
    type: z.enum(['organisation', 'workspace', 'all']).default('all'),
    status: agentStatus.default('active'),
    search: z.string().min(1).max(255).optional().describe('Part of the name or slug.'),
    ...page,
  })
  .strict();

export const pageQuery = z.object(page).strict();

export const idParams = z.object({ id: z.string().min(1).max(255) });

export const syncStatus = z.enum(['never', 'ok', 'error']);

export const integrationObject = z.object({
  id: z.uuid(),
  name: z.string(),
  slug: z.string(),
  description: z.string().nullable(),
  organisation_id: z.uuid(),
  workspace_id: z.uuid().nullable(),
  type: z.enum(['organisation', 'workspace']),
  url: z.string(),
  rpc_url: z.string().nullable(),
  auth_type: authType,
  configurations: z.object({
    custom_headers: z.record(z.string(), z.literal(REDACTED)).optional(),
    bearer_token: z.literal(REDACTED).optional(),
  }),
  global_workspace_access: z.boolean(),
  status: agentStatus,
  sync_status: syncStatus,
  last_synced_at: z.string().nullable(),
  servers_count: z.number().int(),
  owner_id: z.string(),
  updated_by: z.string().nullable(),
  created_at: z.string(),
  last_updated_at: z.string(),
  object: z.literal('agent_integration'),
});

export const metadataObject = z.object({
  agent_name: z.string().nullable(),
  agent_description: z.string().nullable(),
  agent_version: z.string().nullable(),
  protocol_version: z.string().nullable(),
  /** The endpoint the gateway calls: rpc_url, else the card's. */
  rpc_url: z.string().nullable(),
  card_url: z.string(),
  capability_flags: z.object({
    streaming: z.boolean(),
    push_notifications: z.boolean(),
    extended_agent_card: z.boolean(),
  }),
  skills_count: z.number().int(),
  sync_status: syncStatus,
  last_synced_at: z.string().nullable(),
  sync_error: z.string().nullable(),
});

export const workspaceAccessBody = z
  .object({
    workspaces: z.array(z.object({ id: idOrSlug, enabled: z.boolean() }).strict()).max(1000),
    global_workspace_access: z.object({ enabled: z.boolean() }).strict().optional(),
    override_existing_workspace_access: z
      .boolean()
      .default(false)
      .describe('Clear every workspace switch first, so that only those sent (and the global switch) remain.'),
  })
  .strict();

export const workspaceAccessObject = z.object({
  object: z.literal('list'),
  total: z.number().int(),
  data: z.array(
    z.object({ id: z.uuid(), slug: z.string(), name: z.string(), enabled: z.boolean(), has_override: z.boolean() }),
  ),
  global_workspace_access: z.object({ enabled: z.boolean() }),
});

export const skillObject = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  tags: z.array(z.string()),
  examples: z.array(z.string()),
  input_modes: z.array(z.string()),
  output_modes: z.array(z.string()),
  enabled: z.boolean(),
});

export const skillsBody = z
  .object({
    skills: z
      .array(z.object({ id: z.string().min(1).max(255), enabled: z.boolean() }).strict())
      .min(1)
      .max(1000),
  })
  .strict();

export const successObject = z.object({ success: z.literal(true) });

/** A page of skills with the counts of all of them. */
export const skillList = <T extends z.ZodType>(item: T) =>
  z.object({
    object: z.literal('list'),
    total: z.number(),
    data: z.array(item),
    counts: z.object({ total: z.number(), enabled: z.number() }),
  });

export type CreateIntegrationBody = z.infer<typeof createIntegrationBody>;
export type UpdateIntegrationBody = z.infer<typeof updateIntegrationBody>;
export type ListIntegrationsQuery = z.infer<typeof listIntegrationsQuery>;
export type IntegrationObject = z.infer<typeof integrationObject>;
export type MetadataObject = z.infer<typeof metadataObject>;
export type WorkspaceAccessBody = z.infer<typeof workspaceAccessBody>;
export type WorkspaceAccessObject = z.infer<typeof workspaceAccessObject>;
export type SkillObject = z.infer<typeof skillObject>;
export type SkillsBody = z.infer<typeof skillsBody>;
export type PageQuery = z.infer<typeof pageQuery>;
