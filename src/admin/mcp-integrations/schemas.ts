import { z } from 'zod';
import { RESERVED_HEADERS } from '../../mcp/types.js';
import { credentialName, credentialSlug, credentialStatus, freeText } from '../credentials/schemas.js';
import { secretMappingsField } from '../secret-references/mappings.js';
import { idOrSlug } from '../shared/pagination.js';
import { mcpPageQuery } from './capability-schemas.js';

export const mcpTransport = z
  .enum(['http', 'sse'])
  .describe('http: Streamable HTTP; sse: the older HTTP+SSE transport.');
export const mcpAuthType = z
  .enum(['none', 'headers', 'oauth_client_credentials', 'oauth_auto'])
  .describe(
    "none; headers (configurations.custom_headers carry the credential); oauth_client_credentials (client-credentials grant at configurations.token_url); oauth_auto (MCP OAuth discovery, then each user authorizes svcgw (authorization code with PKCE, dynamic client registration without client_id), or, with grant_type client_credentials, svcgw's own client-credentials grant; see docs/mcp.md).",
  );

/** http(s), no user name or password (they would be shown in clear), no fragment. */
const mcpUrl = z
  .string()
  .max(2048)
  .superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL' });
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL' });
    else if (url.username || url.password)
      ctx.addIssue({
        code: 'custom',
        message: 'must not carry a user name or password; put the credential in configurations.custom_headers',
      });
    else if (url.hash) ctx.addIssue({ code: 'custom', message: 'must not carry a fragment' });
  })
  .describe("The MCP server's endpoint (for SSE, the URL of its event stream).");

// Control characters would end up in an upstream request line.
// eslint-disable-next-line no-control-regex
const NO_CONTROL = /^[^\u0000-\u001f\u007f]*$/;
const headerValue = z.string().max(8192).regex(NO_CONTROL, 'header values hold no control characters');
const headerName = z
  .string()
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/, 'a header name is a token (letters, digits, - and a few signs)')
  .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), {
    message: 'svcgw sets this header itself (MCP transport and framing headers cannot be configured)',
  });
const oneLine = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[^\r\n\0]*$/, 'no line breaks');

export const mcpConfigurations = z
  .object({
    custom_headers: z
      .record(headerName, headerValue)
      .refine((headers) => Object.keys(headers).length <= 50, { message: 'at most 50 headers' })
      .optional()
      .describe('Headers sent with every request to the server (sealed at rest, shown masked).'),
    client_id: oneLine(1024).optional(),
    client_secret: oneLine(4096).optional().describe('Sealed at rest, shown masked.'),
    token_url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional()
      .describe('Token endpoint of oauth_client_credentials.'),
    scope: oneLine(1024).optional(),
    audience: oneLine(1024).optional(),
    token_endpoint_auth_method: z.enum(['client_secret_basic', 'client_secret_post']).optional(),
    grant_type: z
      .enum(['authorization_code', 'client_credentials'])
      .optional()
      .describe(
        'oauth_auto: authorization_code (each user authorizes; the default without client_secret) or client_credentials (the default with client_secret).',
      ),
  })
  .strict();

export const secretMappings = secretMappingsField.describe(
  'Fields read from secret references instead of stored: configurations.client_id, configurations.client_secret, configurations.custom_headers (value_format json) or configurations.custom_headers.<Header-Name>. Read when a connection needs them (cached for secret_cache_ttl_ms, read again when the server refuses them); a mapped field wins over a stored one. PUT replaces them ([] removes them).',
);

const ownOrganisation = z
  .string()
  .min(1)
  .max(255)
  .optional()
  .describe("Accepted for compatibility; must be the caller's organisation.");

export const createMcpIntegrationBody = z
  .object({
    name: credentialName,
    url: mcpUrl,
    auth_type: mcpAuthType,
    transport: mcpTransport,
    slug: credentialSlug.optional(),
    description: freeText.nullable().optional(),
    configurations: mcpConfigurations.optional(),
    secret_mappings: secretMappings.optional(),
    workspace_id: idOrSlug
      .optional()
      .describe('Make it a workspace integration; without it an admin key makes an organisation integration.'),
    organisation_id: ownOrganisation,
  })
  .strict();

export const updateMcpIntegrationBody = z
  .object({
    name: credentialName.optional(),
    description: freeText.nullable().optional(),
    url: mcpUrl.optional(),
    auth_type: mcpAuthType.optional(),
    transport: mcpTransport.optional(),
    configurations: mcpConfigurations
      .optional()
      .describe('Replaces the stored object. A secret field sent back as its mask keeps its stored value.'),
    secret_mappings: secretMappings.optional(),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one field to change' });

export const listMcpIntegrationsQuery = z
  .object({
    organisation_id: ownOrganisation,
    type: z.enum(['workspace', 'organisation', 'all']).default('all'),
    workspace_id: idOrSlug
      .optional()
      .describe('Integrations this workspace owns or may use (a workspace key: its own).'),
    search: z.string().max(255).optional().describe('Part of the name or slug (case-insensitive).'),
    status: credentialStatus.default('active'),
    page_size: z.coerce.number().int().min(1).max(1000).default(100),
    current_page: z.coerce.number().int().min(0).default(0).describe('0-based page number.'),
  })
  .strict();

export const mcpIntegrationParams = z.object({ id: idOrSlug });

export const mcpIntegrationObject = z.object({
  id: z.uuid(),
  organisation_id: z.uuid(),
  name: z.string(),
  slug: z.string(),
  description: z.string().nullable(),
  owner_id: z.string().nullable(),
  status: credentialStatus,
  type: z.enum(['organisation', 'workspace']),
  workspace_id: z.string().nullable(),
  url: z.string(),
  transport: mcpTransport,
  auth_type: mcpAuthType,
  configurations: z.record(z.string(), z.unknown()).describe('Secret fields masked.'),
  secret_mappings: z.array(z.unknown()),
  workspaces_count: z.number(),
  sync_status: z.enum(['pending', 'synced', 'error']),
  last_synced_at: z.string().nullable(),
  created_at: z.string(),
  last_updated_at: z.string(),
  object: z.literal('mcp-integration'),
});

export const mcpIntegrationDetail = mcpIntegrationObject.extend({
  global_workspace_access: z.object({ enabled: z.boolean() }),
});

export const mcpIntegrationList = z.object({
  object: z.literal('list'),
  total: z.number(),
  has_more: z.boolean(),
  data: z.array(mcpIntegrationObject),
});

export const workspaceAccessQuery = z
  .object({ version: z.string().max(32).optional().describe('Accepted for compatibility; one shape is answered.') })
  .strict();

export const workspaceAccessBody = z
  .object({
    workspaces: z
      .array(z.object({ id: idOrSlug, enabled: z.boolean() }).strict())
      .max(1000)
      .describe('Per-workspace switches; a workspace without one follows global_workspace_access.'),
    global_workspace_access: z.object({ enabled: z.boolean() }).strict().optional(),
    override_existing_workspace_access: z
      .boolean()
      .default(false)
      .describe(
        'Drop every per-workspace switch first, so that global_workspace_access applies to every workspace not listed.',
      ),
  })
  .strict();

export const workspaceAccessObject = z.object({
  object: z.literal('list'),
  total: z.number(),
  data: z.array(
    z.object({
      id: z.string(),
      slug: z.string(),
      name: z.string(),
      enabled: z.boolean(),
      has_override: z
        .boolean()
        .describe('Whether the workspace has its own switch (else it follows the global access).'),
    }),
  ),
  global_workspace_access: z.object({ enabled: z.boolean() }),
});

export const metadataObject = z.object({
  server_name: z.string().nullable(),
  server_version: z.string().nullable(),
  server_title: z.string().nullable(),
  server_description: z.string().nullable(),
  icons: z.unknown().nullable(),
  website_url: z.string().nullable(),
  protocol_version: z.string().nullable(),
  capability_flags: z.record(z.string(), z.unknown()).nullable(),
  instructions: z.string().nullable(),
  sync_status: z.enum(['pending', 'synced', 'error']),
  last_synced_at: z.string().nullable(),
  sync_error: z.string().nullable(),
});

export { mcpPageQuery };
export type CreateMcpIntegrationBody = z.infer<typeof createMcpIntegrationBody>;
export type UpdateMcpIntegrationBody = z.infer<typeof updateMcpIntegrationBody>;
export type ListMcpIntegrationsQuery = z.infer<typeof listMcpIntegrationsQuery>;
export type McpIntegrationObject = z.infer<typeof mcpIntegrationObject>;
export type WorkspaceAccessBody = z.infer<typeof workspaceAccessBody>;
export type MetadataObject = z.infer<typeof metadataObject>;
