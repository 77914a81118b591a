import { z } from 'zod';
import { guardrailFieldSchemas } from '../../guardrails/store/index.js';
import { credentialStatus, freeText } from '../credentials/schemas.js';
import { mcpPageQuery } from '../mcp-integrations/capability-schemas.js';
import { metadataObject, mcpAuthType, mcpTransport } from '../mcp-integrations/schemas.js';
import { idOrSlug } from '../shared/pagination.js';

/** 3 to 50 lower-case letters, digits, - and _ (the reference's bounds); never a UUID, so URLs may use either. */
const serverSlug = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9_-]{2,49}$/,
    'slug is 3 to 50 lower-case letters, digits, - and _, starting with a letter or digit',
  )
  .refine((slug) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(slug), {
    message: 'slug must not have the form of a UUID',
  });

export const defaultUserAccess = z
  .enum(['allow', 'deny'])
  .describe('What users without an override get; keys with no user follow it too.');

const guardrailFields = {
  input_guardrails: guardrailFieldSchemas.input_guardrails.describe(
    'Guardrails (ids, slugs or inline) run on the arguments of every tool call, before the server sees them.',
  ),
  output_guardrails: guardrailFieldSchemas.output_guardrails.describe(
    'Guardrails run on every tool result, before the client sees it.',
  ),
};

export const createMcpServerBody = z
  .object({
    name: z.string().min(1).max(255),
    mcp_integration_id: idOrSlug.describe('The integration (id or slug) the server is an instance of.'),
    workspace_id: idOrSlug
      .optional()
      .describe("The server's workspace; the key's own for a workspace key, the default workspace for an admin key."),
    description: freeText.nullable().optional(),
    slug: serverSlug.optional(),
    default_user_access: defaultUserAccess.default('allow'),
    ...guardrailFields,
  })
  .strict();

export const updateMcpServerBody = z
  .object({
    name: z.string().min(1).max(255).optional(),
    description: freeText.nullable().optional(),
    input_guardrails: guardrailFields.input_guardrails.nullable(),
    output_guardrails: guardrailFields.output_guardrails.nullable(),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one field to change' });

export const listMcpServersQuery = z
  .object({
    workspace_id: idOrSlug.optional(),
    id: z.uuid().optional().describe('Only this server.'),
    search: z.string().max(255).optional().describe('Part of the name or slug (case-insensitive).'),
    status: credentialStatus.default('active'),
    page_size: z.coerce.number().int().min(1).max(100).default(100),
    current_page: z.coerce.number().int().min(0).default(0).describe('0-based page number.'),
  })
  .strict();

export const mcpServerParams = z.object({ id: idOrSlug });

export const mcpServerListItem = z.object({
  id: z.uuid(),
  organisation_id: z.uuid(),
  name: z.string(),
  description: z.string().nullable(),
  status: credentialStatus,
  created_at: z.string(),
  last_updated_at: z.string(),
  owner_id: z.string().nullable(),
  slug: z.string(),
  workspace_id: z.string(),
  workspace_name: z.string(),
  workspace_slug: z.string(),
  mcp_integration_id: z.string(),
  mcp_integration_slug: z.string(),
  mcp_integration_url: z.string(),
  auth_type: z.string(),
  url: z.string().describe("The server's MCP endpoint on this gateway (Streamable HTTP)."),
  object: z.literal('mcp-server'),
});

export const mcpServerObject = z.object({
  id: z.uuid(),
  slug: z.string(),
  name: z.string(),
  status: credentialStatus,
  description: z.string().nullable(),
  created_at: z.string(),
  last_updated_at: z.string(),
  owner_id: z.string().nullable(),
  workspace_id: z.string(),
  mcp_integration_id: z.string(),
  mcp_integration_details: z.object({
    id: z.string(),
    slug: z.string(),
    name: z.string(),
    url: z.string(),
    transport: mcpTransport,
    auth_type: mcpAuthType,
    status: credentialStatus,
  }),
  default_user_access: defaultUserAccess,
  input_guardrails: z.array(z.unknown()).nullable(),
  output_guardrails: z.array(z.unknown()).nullable(),
  url: z.string().describe("The server's MCP endpoint on this gateway (Streamable HTTP)."),
  object: z.literal('mcp-server'),
});

export const mcpServerList = z.object({
  object: z.literal('list'),
  total: z.number(),
  data: z.array(mcpServerListItem),
});

export const testResult = z.object({
  success: z.boolean(),
  status_code: z.number().nullable().describe("The server's HTTP answer: 200 when the handshake worked."),
  response_time_ms: z.number(),
  url: z.string(),
  server_name: z.string().nullable(),
  error: z.string().nullable(),
});

export const serverMetadataObject = metadataObject.extend({
  mcp_server_id: z.string(),
  mcp_integration_id: z.string(),
});

export const userAccessQuery = z.object({ ...mcpPageQuery }).strict();

export const userAccessList = z.object({
  object: z.literal('list'),
  data: z.array(
    z.object({
      user_id: z.string(),
      first_name: z.string().nullable(),
      last_name: z.string().nullable(),
      email: z.string(),
      enabled: z.boolean().describe('Whether the user may call the server (the override, else the default).'),
      has_override: z.boolean(),
      connection_status: z.enum(['connected', 'not_connected']),
    }),
  ),
  default_user_access: defaultUserAccess,
  total: z.number(),
  has_more: z.boolean(),
});

export const userAccessBody = z
  .object({
    user_access: z
      .array(z.object({ user_id: z.uuid(), enabled: z.boolean() }).strict())
      .max(1000)
      .default([]),
    default_user_access: defaultUserAccess.optional(),
  })
  .strict()
  .refine((body) => body.user_access.length > 0 || body.default_user_access !== undefined, {
    message: 'send user_access, default_user_access, or both',
  });

export const connectionsQuery = z
  .object({
    user_id: z.uuid().optional(),
    workspace_id: idOrSlug.optional(),
    ...mcpPageQuery,
  })
  .strict();

export const connectionList = z.object({
  object: z.literal('list'),
  data: z.array(
    z.object({
      user_id: z.string(),
      workspace_id: z.string(),
      connected: z.boolean(),
      created_at: z.string(),
      last_updated_at: z.string(),
    }),
  ),
  total: z.number(),
  has_more: z.boolean(),
});

export const deleteConnectionsQuery = z
  .object({
    user_id: z.uuid().optional().describe("This user's connection; without it, every connection of the server."),
    workspace_id: idOrSlug.optional().describe("Accepted for compatibility; must be the server's workspace."),
  })
  .strict();

export type CreateMcpServerBody = z.infer<typeof createMcpServerBody>;
export type UpdateMcpServerBody = z.infer<typeof updateMcpServerBody>;
export type ListMcpServersQuery = z.infer<typeof listMcpServersQuery>;
export type McpServerObject = z.infer<typeof mcpServerObject>;
export type McpServerListItem = z.infer<typeof mcpServerListItem>;
export type UserAccessBody = z.infer<typeof userAccessBody>;
export type UserAccessQuery = z.infer<typeof userAccessQuery>;
export type ConnectionsQuery = z.infer<typeof connectionsQuery>;
export type DeleteConnectionsQuery = z.infer<typeof deleteConnectionsQuery>;
