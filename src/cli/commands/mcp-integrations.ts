import { Command, Option } from 'commander';
import { FatalError } from '../fatal-error.js';
import type { Column } from '../output.js';
import { clientCommand, defined, done, enc, examples, list, pairs, printOne, run, type Context } from './common.js';
import { archiveCommand, metadataCommand, workspaceAccessBody, type ToolResource } from './tool-commands.js';

const INTEGRATION: ToolResource = { path: '/v1/mcp-integrations', noun: 'MCP integration', argument: '<integration>' };

interface McpIntegration {
  id: string;
  slug: string;
  name: string;
  type: string;
  url: string;
  transport: string;
  auth_type: string;
  workspaces_count: number;
  sync_status: string;
  status: string;
}

const COLUMNS: Column<McpIntegration>[] = [
  { header: 'slug', value: (i) => i.slug },
  { header: 'name', value: (i) => i.name },
  { header: 'owner', value: (i) => i.type },
  { header: 'url', value: (i) => i.url },
  { header: 'transport', value: (i) => i.transport },
  { header: 'auth', value: (i) => i.auth_type },
  { header: 'workspaces', value: (i) => String(i.workspaces_count) },
  {
    header: 'sync',
    value: (i) => i.sync_status,
    colour: (i) => (i.sync_status === 'synced' ? 'green' : i.sync_status === 'error' ? 'red' : 'gray'),
  },
];

export interface Capability {
  name: string;
  type: string;
  title: string | null;
  enabled: boolean;
  integration_enabled?: boolean;
}

export const CAPABILITY_COLUMNS: Column<Capability>[] = [
  { header: 'type', value: (c) => c.type },
  { header: 'name', value: (c) => c.name },
  { header: 'title', value: (c) => c.title },
  { header: 'enabled', value: (c) => (c.enabled ? 'yes' : 'no'), colour: (c) => (c.enabled ? 'green' : 'gray') },
];

export const capabilityType = () =>
  new Option('--type <type>', 'tool, prompt, resource or resource_template').choices([
    'tool',
    'prompt',
    'resource',
    'resource_template',
  ]);

/** Every page of a capability list (the MCP lists page with `page`, 1-based). */
export async function allCapabilities(ctx: Context, path: string, type: string | undefined): Promise<Capability[]> {
  const out: Capability[] = [];
  for (let page = 1; ; page++) {
    const body = await ctx.client.get<{ data: Capability[]; has_more: boolean }>(path, {
      type,
      page,
      page_size: 500,
    });
    out.push(...body.data);
    if (!body.has_more) return out;
  }
}

/** `enable` and `disable` of a list of capabilities, for integrations and servers alike. */
export function switchCommand(kind: 'integration' | 'server', enabled: boolean): Command {
  const base = kind === 'integration' ? '/v1/mcp-integrations' : '/v1/mcp-servers';
  const verb = enabled ? 'enable' : 'disable';
  return examples(
    clientCommand(
      verb,
      `${verb} tools, prompts or resources ${kind === 'integration' ? 'for every server of the integration' : 'on this server'}`,
    )
      .argument(`<${kind}>`, 'slug or id')
      .argument('<names...>', 'capability names (tool or prompt names, resource URIs or URI templates)')
      .addOption(capabilityType().default('tool'))
      .action(
        run(async (ctx: Context<{ type: string }>, ref: string, names: string[]) => {
          const body = await ctx.client.put(`${base}/${enc(ref)}/capabilities`, {
            capabilities: names.map((name) => ({ name, type: ctx.opts.type, enabled })),
          });
          done(ctx, body, `${enabled ? 'Enabled' : 'Disabled'} ${names.join(', ')} on ${ref}.`);
        }),
      ),
    [`svcgw mcp ${kind}s ${verb} ${kind === 'integration' ? 'github' : 'team-github'} delete_repo --type tool`],
  );
}

interface ConnectionOptions {
  url?: string;
  transport?: string;
  auth?: string;
  header?: Record<string, string>;
  clientId?: string;
  clientSecret?: string;
  clientSecretStdin?: boolean;
  tokenUrl?: string;
  scope?: string;
  audience?: string;
}

function connectionOptions(command: Command, creating: boolean): Command {
  return command
    .addOption(new Option('--transport <transport>', 'http (Streamable HTTP) or sse').choices(['http', 'sse']))
    .addOption(
      new Option('--auth <type>', 'none, headers, oauth_client_credentials or oauth_auto').choices([
        'none',
        'headers',
        'oauth_client_credentials',
        'oauth_auto',
      ]),
    )
    .option(
      '--header <name=value>',
      'a header sent with every request to the server (stored encrypted); repeat for several',
      pairs,
    )
    .option('--client-id <id>', 'OAuth client id')
    .option('--client-secret <secret>', 'OAuth client secret (stored encrypted; prefer --client-secret-stdin)')
    .option('--client-secret-stdin', 'read the OAuth client secret from standard input')
    .option('--token-url <url>', 'token endpoint of the client-credentials grant')
    .option('--scope <scope>', 'OAuth scope to ask for')
    .option('--audience <audience>', 'OAuth audience to ask for')
    .description(
      `${command.description()}${creating ? '' : '; connection flags replace the stored configurations (headers and secrets included)'}`,
    );
}

async function configurationsOf(opts: ConnectionOptions): Promise<Record<string, unknown> | undefined> {
  if (opts.clientSecret !== undefined && opts.clientSecretStdin)
    throw new FatalError('give either --client-secret or --client-secret-stdin, not both', 2);
  let secret = opts.clientSecret;
  if (opts.clientSecretStdin) {
    let text = '';
    for await (const chunk of process.stdin) text += String(chunk);
    secret = text.trim();
    if (!secret) throw new FatalError('--client-secret-stdin: standard input was empty', 2);
  }
  const config = defined({
    custom_headers: opts.header,
    client_id: opts.clientId,
    client_secret: secret,
    token_url: opts.tokenUrl,
    scope: opts.scope,
    audience: opts.audience,
  });
  return Object.keys(config).length > 0 ? config : undefined;
}

export function mcpIntegrationsCommand(): Command {
  const group = new Command('integrations').description(
    'MCP integrations (upstream MCP servers): create, list, get, update, delete, share, capabilities, enable, disable, metadata',
  );

  group.addCommand(
    examples(
      connectionOptions(
        clientCommand('create', 'register an upstream MCP server (its capabilities are synced right after)')
          .requiredOption('--name <name>', 'name')
          .requiredOption('--url <url>', "the server's MCP endpoint (for SSE, its event stream)")
          .option('--slug <slug>', 'slug; derived from the name when left out')
          .option('--description <text>', 'description')
          .option(
            '--workspace <id|slug>',
            'make it a workspace integration (default: organisation-wide for an admin key)',
          ),
        true,
      ).action(
        run(
          async (
            ctx: Context<ConnectionOptions & { name: string; slug?: string; description?: string; workspace?: string }>,
          ) => {
            const o = ctx.opts;
            const created = await ctx.client.post<{ id: string; slug: string }>(
              '/v1/mcp-integrations',
              defined({
                name: o.name,
                slug: o.slug,
                description: o.description,
                url: o.url,
                transport: o.transport ?? 'http',
                auth_type: o.auth ?? 'none',
                workspace_id: o.workspace,
                configurations: await configurationsOf(o),
              }),
            );
            ctx.out.result(created, () => `Created MCP integration ${created.slug} (${created.id}).`);
          },
        ),
      ),
      [
        'svcgw mcp integrations create --name GitHub --slug github --url https://mcp.example.com/mcp --auth headers --header "Authorization=Bearer $TOKEN"',
      ],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('list', 'list MCP integrations')
        .addOption(
          new Option('--type <type>', 'organisation, workspace or all').choices(['organisation', 'workspace', 'all']),
        )
        .option('--workspace <id|slug>', 'what this workspace owns or may use')
        .option('--search <text>', 'part of the name or slug')
        .option('--status <status>', 'active or archived', 'active')
        .action(
          run(async (ctx: Context<{ type?: string; workspace?: string; search?: string; status: string }>) => {
            const o = ctx.opts;
            const body = await ctx.client.get<{ total: number; data: McpIntegration[] }>(
              '/v1/mcp-integrations',
              defined({ type: o.type, workspace_id: o.workspace, search: o.search, status: o.status, page_size: 1000 }),
            );
            ctx.out.result(body, () => ctx.out.table(body.data, COLUMNS));
          }),
        ),
      ['svcgw mcp integrations list --type organisation'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('get', 'show an MCP integration (secrets masked)')
        .argument('<integration>', 'slug or id')
        .action(run(async (ctx, ref: string) => printOne(ctx, `/v1/mcp-integrations/${enc(ref)}`))),
      ['svcgw mcp integrations get github --json'],
    ),
  );
  group.addCommand(
    examples(
      connectionOptions(
        clientCommand('update', 'change an MCP integration')
          .argument('<integration>', 'slug or id')
          .option('--name <name>', 'new name')
          .option('--url <url>', 'new URL')
          .option('--description <text>', 'new description'),
        false,
      ).action(
        run(async (ctx: Context<ConnectionOptions & { name?: string; description?: string }>, ref: string) => {
          const o = ctx.opts;
          const body = defined({
            name: o.name,
            description: o.description,
            url: o.url,
            transport: o.transport,
            auth_type: o.auth,
            configurations: await configurationsOf(o),
          });
          if (Object.keys(body).length === 0) throw new FatalError('nothing to change: give at least one option', 2);
          done(ctx, await ctx.client.put(`/v1/mcp-integrations/${enc(ref)}`, body), `Updated MCP integration ${ref}.`);
        }),
      ),
      ['svcgw mcp integrations update github --url https://mcp2.example.com/mcp'],
    ),
  );
  group.addCommand(
    archiveCommand(
      INTEGRATION,
      'delete (archive) an MCP integration and its MCP servers',
      'svcgw mcp integrations delete github --yes',
    ),
  );
  group.addCommand(
    examples(
      clientCommand('share', 'choose which workspaces may use an organisation integration')
        .argument('<integration>', 'slug or id')
        .option('--with <workspaces>', 'workspaces (ids or slugs) that may use it; comma-separated or repeated', list)
        .option('--not-with <workspaces>', 'workspaces that may not', list)
        .option('--all-workspaces', 'every workspace without a switch of its own may use it')
        .option('--no-all-workspaces', 'only workspaces switched on may use it')
        .option('--reset', 'drop every workspace switch first')
        .action(
          run(
            async (
              ctx: Context<{ with?: string[]; notWith?: string[]; allWorkspaces?: boolean; reset?: boolean }>,
              ref: string,
            ) => {
              const o = ctx.opts;
              const body = await ctx.client.put(
                `/v1/mcp-integrations/${enc(ref)}/workspaces`,
                workspaceAccessBody({ on: o.with, off: o.notWith, global: o.allWorkspaces, replace: o.reset }),
              );
              done(ctx, body, `Updated the workspace access of ${ref}.`);
            },
          ),
        ),
      ['svcgw mcp integrations share github --with team-a,team-b'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('workspaces', 'show which workspaces may use an integration')
        .argument('<integration>', 'slug or id')
        .action(
          run(async (ctx, ref: string) => {
            const body = await ctx.client.get<{
              data: Array<{ slug: string; enabled: boolean; has_override: boolean }>;
              global_workspace_access: { enabled: boolean };
            }>(`/v1/mcp-integrations/${enc(ref)}/workspaces`);
            ctx.out.result(
              body,
              () =>
                `${ctx.out.table(body.data, [
                  { header: 'workspace', value: (w) => w.slug },
                  { header: 'enabled', value: (w) => (w.enabled ? 'yes' : 'no') },
                  { header: 'how', value: (w) => (w.has_override ? 'own switch' : 'global') },
                ])}\nglobal access: ${body.global_workspace_access.enabled ? 'on' : 'off'}`,
            );
          }),
        ),
      ['svcgw mcp integrations workspaces github'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('capabilities', "list the tools, prompts and resources synced from the integration's server")
        .argument('<integration>', 'slug or id')
        .addOption(capabilityType())
        .action(
          run(async (ctx: Context<{ type?: string }>, ref: string) => {
            const data = await allCapabilities(ctx, `/v1/mcp-integrations/${enc(ref)}/capabilities`, ctx.opts.type);
            ctx.out.result({ object: 'list', total: data.length, data }, () => ctx.out.table(data, CAPABILITY_COLUMNS));
          }),
        ),
      ['svcgw mcp integrations capabilities github --type tool'],
    ),
  );
  group.addCommand(switchCommand('integration', true));
  group.addCommand(switchCommand('integration', false));
  group.addCommand(
    metadataCommand(
      INTEGRATION,
      "the server's name, version, protocol version and how the last sync went",
      'svcgw mcp integrations metadata github',
    ),
  );
  return group;
}
