import { z } from 'zod';

/**
 * The MCP and agent sections of an apply file. MCP and A2A are one family on the server (an
 * integration says where the remote server is; a server is its instance in one workspace), so
 * the two share their shape here: integrations and servers known by slug, the integration a
 * server is made from and every workspace named by slug, users by e-mail address or id.
 */

const ref = z.string().min(1).max(255);
const jsonObject = z.record(z.string(), z.unknown());

/** Which workspaces may use an organisation integration: the global switch and per-workspace ones. */
const workspaceAccess = z
  .object({
    global: z.boolean().optional().describe('every workspace without a switch of its own may use it'),
    workspaces: z.record(ref, z.boolean()).optional().describe('workspace slug → whether it may use it'),
  })
  .strict();

const userAccess = z
  .array(z.object({ user: ref.describe("the user's e-mail address or id"), enabled: z.boolean() }).strict())
  .optional();

const integrationFields = {
  name: z.string().min(1).max(255),
  url: z.string().min(1),
  description: z.string().nullable().optional(),
  workspace: ref.optional().describe('slug of the workspace that owns it; organisation-wide when left out'),
  configurations: jsonObject
    .optional()
    .describe('credentials (custom_headers, tokens): write them as ${VARIABLE}, taken from the environment'),
  workspace_access: workspaceAccess.optional(),
};

const serverFields = {
  name: z.string().min(1).max(255),
  integration: ref.describe('slug of the integration it is made from'),
  workspace: ref.optional().describe('slug of its workspace; the default workspace when left out'),
  description: z.string().nullable().optional(),
  default_user_access: z.enum(['allow', 'deny']).optional(),
  user_access: userAccess,
};

const mcpSlug = z
  .string()
  .max(255)
  .regex(/^[a-zA-Z0-9_-]+$/, 'an MCP integration slug takes letters, digits, - and _');
const agentSlug = z.string().regex(/^[a-z0-9][a-z0-9-]{1,62}$/, 'slug is 2–63 lower-case letters, digits and dashes');

/** Switches on the tools, prompts and resources the MCP server lists; those not named are left as they are. */
const capabilities = z
  .array(
    z
      .object({
        name: z.string().min(1),
        type: z.enum(['tool', 'prompt', 'resource', 'resource_template']).default('tool'),
        enabled: z.boolean(),
      })
      .strict(),
  )
  .optional();

/** Switches on the skills the agent's card lists; those not named are left as they are. */
const skills = z.array(z.object({ id: z.string().min(1).max(255), enabled: z.boolean() }).strict()).optional();

export const toolSections = {
  mcp_integrations: z
    .array(
      z
        .object({
          slug: mcpSlug,
          ...integrationFields,
          transport: z.enum(['http', 'sse']).default('http'),
          auth_type: z.enum(['none', 'headers', 'oauth_client_credentials', 'oauth_auto']).default('none'),
          capabilities,
        })
        .strict(),
    )
    .default([]),
  mcp_servers: z
    .array(
      z
        .object({
          slug: z
            .string()
            .regex(/^[a-z0-9][a-z0-9_-]{2,49}$/, 'an MCP server slug is 3–50 lower-case letters, digits, - and _'),
          ...serverFields,
          input_guardrails: z.array(z.unknown()).nullable().optional(),
          output_guardrails: z.array(z.unknown()).nullable().optional(),
          capabilities,
        })
        .strict(),
    )
    .default([]),
  agent_integrations: z
    .array(
      z
        .object({
          slug: agentSlug,
          ...integrationFields,
          rpc_url: z.string().min(1).nullable().optional(),
          auth_type: z.enum(['none', 'headers', 'bearer']).default('none'),
          skills,
        })
        .strict(),
    )
    .default([]),
  agent_servers: z.array(z.object({ slug: agentSlug, ...serverFields, skills }).strict()).default([]),
};

export interface ToolSectionsFile {
  mcp_integrations: z.infer<(typeof toolSections)['mcp_integrations']>;
  mcp_servers: z.infer<(typeof toolSections)['mcp_servers']>;
  agent_integrations: z.infer<(typeof toolSections)['agent_integrations']>;
  agent_servers: z.infer<(typeof toolSections)['agent_servers']>;
}
