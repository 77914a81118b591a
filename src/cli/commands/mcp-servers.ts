import { Command, Option } from 'commander';
import { confirmFirst, YES_HELP } from '../confirm.js';
import { FatalError } from '../fatal-error.js';
import type { Column } from '../output.js';
import { clientCommand, defined, done, enc, examples, list, printOne, run, type Context } from './common.js';
import {
  allCapabilities,
  CAPABILITY_COLUMNS,
  capabilityType,
  mcpIntegrationsCommand,
  switchCommand,
} from './mcp-integrations.js';
import { archiveCommand, metadataCommand, onOff, type ToolResource } from './tool-commands.js';

const SERVER: ToolResource = { path: '/v1/mcp-servers', noun: 'MCP server', argument: '<server>' };

interface McpServer {
  id: string;
  slug: string;
  name: string;
  workspace_slug: string;
  mcp_integration_slug: string;
  url: string;
  status: string;
}

const COLUMNS: Column<McpServer>[] = [
  { header: 'slug', value: (s) => s.slug },
  { header: 'name', value: (s) => s.name },
  { header: 'workspace', value: (s) => s.workspace_slug },
  { header: 'integration', value: (s) => s.mcp_integration_slug },
  { header: 'url', value: (s) => s.url },
  { header: 'status', value: (s) => s.status, colour: (s) => (s.status === 'active' ? 'green' : 'gray') },
];

interface UserAccess {
  user_id: string;
  email: string;
  enabled: boolean;
  has_override: boolean;
  connection_status: string;
}

function serversCommand(): Command {
  const group = new Command('servers').description(
    'MCP servers (a workspace instance of an integration, reached at /v1/mcp/{slug}/mcp): create, list, get, update, delete, test, capabilities, enable, disable, access, connections',
  );
  group.addCommand(
    examples(
      clientCommand('create', 'create an MCP server from an integration the workspace may use')
        .requiredOption('--name <name>', 'name')
        .requiredOption('--integration <id|slug>', 'the MCP integration')
        .option('--slug <slug>', 'slug (3 to 50 characters); it names the endpoint')
        .option(
          '--workspace <id|slug>',
          "workspace (default: the key's own, or the default workspace for an admin key)",
        )
        .option('--description <text>', 'description')
        .addOption(
          new Option('--default-access <access>', 'what users without an override get').choices(['allow', 'deny']),
        )
        .option('--input-guardrail <ref>', 'guardrail (id or slug) run on tool arguments; repeat for several', list)
        .option('--output-guardrail <ref>', 'guardrail (id or slug) run on tool results; repeat for several', list)
        .action(
          run(
            async (
              ctx: Context<{
                name: string;
                integration: string;
                slug?: string;
                workspace?: string;
                description?: string;
                defaultAccess?: string;
                inputGuardrail?: string[];
                outputGuardrail?: string[];
              }>,
            ) => {
              const o = ctx.opts;
              const created = await ctx.client.post<{ id: string; slug: string }>(
                '/v1/mcp-servers',
                defined({
                  name: o.name,
                  mcp_integration_id: o.integration,
                  slug: o.slug,
                  workspace_id: o.workspace,
                  description: o.description,
                  default_user_access: o.defaultAccess,
                  input_guardrails: o.inputGuardrail,
                  output_guardrails: o.outputGuardrail,
                }),
              );
              ctx.out.result(
                created,
                () =>
                  `Created MCP server ${created.slug} (${created.id}); clients connect to /v1/mcp/${created.slug}/mcp.`,
              );
            },
          ),
        ),
      ['svcgw mcp servers create --name "Team GitHub" --slug team-github --integration github --workspace team-a'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('list', 'list MCP servers')
        .option('--workspace <id|slug>', 'only this workspace')
        .option('--search <text>', 'part of the name or slug')
        .option('--status <status>', 'active or archived', 'active')
        .action(
          run(async (ctx: Context<{ workspace?: string; search?: string; status: string }>) => {
            const o = ctx.opts;
            const body = await ctx.client.get<{ total: number; data: McpServer[] }>(
              '/v1/mcp-servers',
              defined({ workspace_id: o.workspace, search: o.search, status: o.status, page_size: 100 }),
            );
            ctx.out.result(body, () => ctx.out.table(body.data, COLUMNS));
          }),
        ),
      ['svcgw mcp servers list --workspace team-a'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('get', 'show an MCP server (its url is the endpoint clients use)')
        .argument('<server>', 'slug or id')
        .action(run(async (ctx, ref: string) => printOne(ctx, `/v1/mcp-servers/${enc(ref)}`))),
      ['svcgw mcp servers get team-github'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('update', 'rename an MCP server or change its guardrails')
        .argument('<server>', 'slug or id')
        .option('--name <name>', 'new name')
        .option('--description <text>', 'new description')
        .option(
          '--input-guardrail <ref>',
          'guardrail run on tool arguments (replaces the list); repeat for several',
          list,
        )
        .option(
          '--output-guardrail <ref>',
          'guardrail run on tool results (replaces the list); repeat for several',
          list,
        )
        .option('--no-guardrails', 'remove every guardrail')
        .action(
          run(
            async (
              ctx: Context<{
                name?: string;
                description?: string;
                inputGuardrail?: string[];
                outputGuardrail?: string[];
                guardrails?: boolean;
              }>,
              ref: string,
            ) => {
              const o = ctx.opts;
              const clear = o.guardrails === false;
              const body = defined({
                name: o.name,
                description: o.description,
                input_guardrails: clear ? null : o.inputGuardrail,
                output_guardrails: clear ? null : o.outputGuardrail,
              });
              if (Object.keys(body).length === 0)
                throw new FatalError('nothing to change: give at least one option', 2);
              done(ctx, await ctx.client.put(`/v1/mcp-servers/${enc(ref)}`, body), `Updated MCP server ${ref}.`);
            },
          ),
        ),
      ['svcgw mcp servers update team-github --input-guardrail no-secrets'],
    ),
  );
  group.addCommand(
    archiveCommand(
      SERVER,
      'delete (archive) an MCP server: its endpoint stops answering',
      'svcgw mcp servers delete team-github --yes',
    ),
  );
  group.addCommand(
    examples(
      clientCommand('test', "connect to the server's upstream now (and sync its capabilities); exit 1 when it fails")
        .argument('<server>', 'slug or id')
        .action(
          run(async (ctx, ref: string) => {
            const result = await ctx.client.post<{
              success: boolean;
              status_code: number | null;
              response_time_ms: number;
              server_name: string | null;
              error: string | null;
            }>(`/v1/mcp-servers/${enc(ref)}/test`);
            ctx.out.result(result, () =>
              result.success
                ? `Connected to ${result.server_name ?? 'the server'} in ${result.response_time_ms} ms.`
                : `Could not connect: ${result.error ?? 'unknown error'}`,
            );
            if (!result.success) process.exitCode = 1;
          }),
        ),
      ['svcgw mcp servers test team-github'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('capabilities', 'list what this server allows of its integration')
        .argument('<server>', 'slug or id')
        .addOption(capabilityType())
        .action(
          run(async (ctx: Context<{ type?: string }>, ref: string) => {
            const data = await allCapabilities(ctx, `/v1/mcp-servers/${enc(ref)}/capabilities`, ctx.opts.type);
            ctx.out.result({ object: 'list', total: data.length, data }, () => ctx.out.table(data, CAPABILITY_COLUMNS));
          }),
        ),
      ['svcgw mcp servers capabilities team-github'],
    ),
  );
  group.addCommand(switchCommand('server', true));
  group.addCommand(switchCommand('server', false));
  group.addCommand(
    examples(
      clientCommand('access', 'show who may call the server, or change it')
        .argument('<server>', 'slug or id')
        .option('--allow <users>', 'user ids allowed (overrides); comma-separated or repeated', list)
        .option('--deny <users>', 'user ids denied (overrides); comma-separated or repeated', list)
        .addOption(new Option('--default <access>', 'what users without an override get').choices(['allow', 'deny']))
        .action(
          run(async (ctx: Context<{ allow?: string[]; deny?: string[]; default?: string }>, ref: string) => {
            const o = ctx.opts;
            const path = `/v1/mcp-servers/${enc(ref)}/user-access`;
            const changes = onOff('user_id', o.allow, o.deny);
            if (changes.length > 0 || o.default !== undefined) {
              const body = await ctx.client.put(
                path,
                defined({ user_access: changes, default_user_access: o.default }),
              );
              done(ctx, body, `Updated the user access of ${ref}.`);
              return;
            }
            const users: UserAccess[] = [];
            let defaultAccess = '';
            for (let page = 1; ; page++) {
              const body = await ctx.client.get<{ data: UserAccess[]; has_more: boolean; default_user_access: string }>(
                path,
                { page, page_size: 500 },
              );
              users.push(...body.data);
              defaultAccess = body.default_user_access;
              if (!body.has_more) break;
            }
            ctx.out.result(
              { object: 'list', total: users.length, data: users, default_user_access: defaultAccess },
              () =>
                `${ctx.out.table(users, [
                  { header: 'user', value: (u) => u.email },
                  { header: 'allowed', value: (u) => (u.enabled ? 'yes' : 'no') },
                  { header: 'how', value: (u) => (u.has_override ? 'override' : 'default') },
                  { header: 'connection', value: (u) => u.connection_status },
                  { header: 'id', value: (u) => u.user_id },
                ])}\ndefault: ${defaultAccess}`,
            );
          }),
        ),
      ['svcgw mcp servers access team-github --default deny --allow 5b0e…'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('connections', 'list the users connected to the server through the gateway')
        .argument('<server>', 'slug or id')
        .option('--user <id>', 'only this user')
        .action(
          run(async (ctx: Context<{ user?: string }>, ref: string) => {
            const body = await ctx.client.get<{
              total: number;
              data: Array<{ user_id: string; created_at: string; last_updated_at: string }>;
            }>(`/v1/mcp-servers/${enc(ref)}/connections`, defined({ user_id: ctx.opts.user, page_size: 500 }));
            ctx.out.result(body, () =>
              ctx.out.table(body.data, [
                { header: 'user', value: (c) => c.user_id },
                { header: 'since', value: (c) => c.created_at },
                { header: 'last', value: (c) => c.last_updated_at },
              ]),
            );
          }),
        ),
      ['svcgw mcp servers connections team-github'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('disconnect', "forget a user's connection (or every connection) to the server")
        .argument('<server>', 'slug or id')
        .option('--user <id>', "this user's connection; without it, every connection")
        .option('--yes', YES_HELP)
        .hook('preAction', confirmFirst('forget connections to MCP server'))
        .action(
          run(async (ctx: Context<{ user?: string }>, ref: string) => {
            const body = await ctx.client.delete(
              `/v1/mcp-servers/${enc(ref)}/connections${ctx.opts.user ? `?user_id=${enc(ctx.opts.user)}` : ''}`,
            );
            done(
              ctx,
              body,
              `Forgot ${ctx.opts.user ? `the connection of ${ctx.opts.user}` : 'every connection'} to ${ref}.`,
            );
          }),
        ),
      ['svcgw mcp servers disconnect team-github --user 5b0e… --yes'],
    ),
  );
  group.addCommand(
    metadataCommand(
      SERVER,
      "the upstream server's metadata and how the last sync went",
      'svcgw mcp servers metadata team-github',
    ),
  );
  return group;
}

export function mcpCommand(): Command {
  return new Command('mcp')
    .description('MCP integrations (upstream MCP servers) and MCP servers (their endpoints on the gateway)')
    .addCommand(mcpIntegrationsCommand())
    .addCommand(serversCommand());
}
