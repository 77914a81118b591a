import { Command, Option } from 'commander';
import { FatalError } from '../fatal-error.js';
import type { Column } from '../output.js';
import { setSkillsCommand } from './agent-integrations.js';
import {
  clientCommand,
  defined,
  done,
  enc,
  examples,
  pagingOptions,
  printList,
  printOne,
  run,
  type Context,
} from './common.js';
import { archiveCommand, type ToolResource } from './tool-commands.js';

const SERVER: ToolResource = { path: '/v1/agent-servers', noun: 'agent server', argument: '<server>' };

interface ServerRow {
  id: string;
  slug: string;
  name: string;
  workspace_slug: string;
  agent_integration_slug: string;
  default_user_access: string;
  url: string;
  status: string;
}

const COLUMNS: Column<ServerRow>[] = [
  { header: 'slug', value: (s) => s.slug },
  { header: 'name', value: (s) => s.name },
  { header: 'workspace', value: (s) => s.workspace_slug },
  { header: 'integration', value: (s) => s.agent_integration_slug },
  { header: 'users', value: (s) => s.default_user_access },
  { header: 'url', value: (s) => s.url },
  { header: 'status', value: (s) => s.status, colour: (s) => (s.status === 'active' ? 'green' : 'gray') },
];

function userSwitch(value: string, previous: Array<{ user_id: string; enabled: boolean | null }> = []) {
  const match = /^(.+)=(allow|deny|default)$/.exec(value);
  if (!match) throw new FatalError('--user takes <user id>=allow, =deny or =default', 2);
  return [...previous, { user_id: match[1]!, enabled: match[2] === 'default' ? null : match[2] === 'allow' }];
}

export function agentServersCommand(): Command {
  const group = new Command('servers').description(
    'agent servers (an agent integration in a workspace, served at /v1/agents/{slug}): create, list, get, update, delete, test, skills, user access',
  );
  group.addCommand(
    examples(
      clientCommand('create', 'serve an agent integration in a workspace')
        .requiredOption('--name <name>', 'name')
        .requiredOption('--integration <id|slug>', 'the agent integration')
        .option('--workspace <id|slug>', "workspace (required with an admin key; a workspace key's own otherwise)")
        .option('--slug <slug>', 'its gateway URL is /v1/agents/{slug}; derived from the name when left out')
        .option('--description <text>', 'description')
        .addOption(new Option('--default-user-access <access>', 'users without an override').choices(['allow', 'deny']))
        .action(
          run(
            async (
              ctx: Context<{
                name: string;
                integration: string;
                workspace?: string;
                slug?: string;
                description?: string;
                defaultUserAccess?: string;
              }>,
            ) => {
              const o = ctx.opts;
              const created = await ctx.client.post<{ id: string; slug: string; url: string }>(
                '/v1/agent-servers',
                defined({
                  name: o.name,
                  agent_integration_id: o.integration,
                  workspace_id: o.workspace,
                  slug: o.slug,
                  description: o.description,
                  default_user_access: o.defaultUserAccess,
                }),
              );
              ctx.out.result(
                created,
                () => `Created agent server ${created.slug} (${created.id}), served at ${created.url}.`,
              );
            },
          ),
        ),
      ['svcgw agents servers create --name Research --integration research-agent --workspace team-a --slug research'],
    ),
  );
  group.addCommand(
    examples(
      pagingOptions(clientCommand('list', 'list agent servers'))
        .option('--workspace <id|slug>', 'one workspace')
        .option('--integration <id|slug>', 'servers of one agent integration')
        .option('--status <status>', 'active or archived', 'active')
        .option('--search <text>', 'part of the name or slug')
        .action(
          run(async (ctx: Context<{ workspace?: string; integration?: string; status: string; search?: string }>) =>
            printList<ServerRow>(
              ctx,
              '/v1/agent-servers',
              {
                workspace_id: ctx.opts.workspace,
                agent_integration_id: ctx.opts.integration,
                status: ctx.opts.status,
                search: ctx.opts.search,
              },
              COLUMNS,
            ),
          ),
        ),
      ['svcgw agents servers list --workspace team-a'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('get', 'show an agent server with its gateway URL')
        .argument('<server>', 'slug or id')
        .action(run(async (ctx, ref: string) => printOne(ctx, `/v1/agent-servers/${enc(ref)}`))),
      ['svcgw agents servers get research'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('update', 'rename an agent server or change its description (the slug is fixed)')
        .argument('<server>', 'slug or id')
        .option('--name <name>', 'new name')
        .option('--description <text>', 'new description')
        .action(
          run(async (ctx: Context<{ name?: string; description?: string }>, ref: string) =>
            done(
              ctx,
              await ctx.client.put(
                `/v1/agent-servers/${enc(ref)}`,
                defined({ name: ctx.opts.name, description: ctx.opts.description }),
              ),
              `Updated agent server ${ref}.`,
            ),
          ),
        ),
      ['svcgw agents servers update research --name "Research (EU)"'],
    ),
  );
  group.addCommand(
    archiveCommand(
      SERVER,
      'delete (archive) an agent server: the gateway stops serving it',
      'svcgw agents servers delete research --yes',
    ),
  );
  group.addCommand(
    examples(
      clientCommand('test', "reach the server's agent: read its card with the integration's credentials")
        .argument('<server>', 'slug or id')
        .action(
          run(async (ctx, ref: string) => {
            const body = await ctx.client.post<{
              success: boolean;
              status_code: number | null;
              response_time_ms: number;
              agent_name: string | null;
              error: string | null;
            }>(`/v1/agent-servers/${enc(ref)}/test`);
            ctx.out.result(body, () =>
              body.success
                ? `Reached ${body.agent_name} (HTTP ${body.status_code}, ${body.response_time_ms} ms).`
                : `Could not read the agent's card: ${body.error}`,
            );
            if (!body.success) process.exitCode = 1;
          }),
        ),
      ['svcgw agents servers test research'],
    ),
  );
  group.addCommand(
    examples(
      pagingOptions(clientCommand('skills', "the agent's skills on this server"))
        .argument('<server>', 'slug or id')
        .action(
          run(async (ctx, ref: string) =>
            printList<{ id: string; name: string; enabled: boolean; integration_enabled: boolean }>(
              ctx,
              `/v1/agent-servers/${enc(ref)}/skills`,
              {},
              [
                { header: 'id', value: (s) => s.id },
                { header: 'name', value: (s) => s.name },
                { header: 'enabled', value: (s) => s.enabled },
                { header: 'integration', value: (s) => s.integration_enabled },
              ],
            ),
          ),
        ),
      ['svcgw agents servers skills research'],
    ),
  );
  group.addCommand(
    setSkillsCommand(
      SERVER,
      'enable or disable skills on this server',
      'svcgw agents servers set-skills research --skill translate=off',
    ),
  );
  group.addCommand(
    examples(
      pagingOptions(clientCommand('user-access', 'show, or change, who may call the server'))
        .argument('<server>', 'slug or id')
        .addOption(new Option('--default <access>', 'users without an override').choices(['allow', 'deny']))
        .option(
          '--user <user-id=allow|deny|default>',
          "a user's override (default removes it); repeat for several",
          userSwitch,
        )
        .action(
          run(
            async (
              ctx: Context<{ default?: string; user?: Array<{ user_id: string; enabled: boolean | null }> }>,
              ref: string,
            ) => {
              const o = ctx.opts;
              const path = `/v1/agent-servers/${enc(ref)}/user-access`;
              if (o.default === undefined && !o.user)
                return printList<{ user_id: string; email: string; enabled: boolean; has_override: boolean }>(
                  ctx,
                  path,
                  {},
                  [
                    { header: 'user', value: (u) => u.user_id },
                    { header: 'email', value: (u) => u.email },
                    {
                      header: 'access',
                      value: (u) => (u.enabled ? 'allow' : 'deny'),
                      colour: (u) => (u.enabled ? 'green' : 'red'),
                    },
                    { header: 'override', value: (u) => u.has_override },
                  ],
                );
              const body = await ctx.client.put(path, defined({ default_user_access: o.default, user_access: o.user }));
              done(ctx, body, `Updated the user access of agent server ${ref}.`);
            },
          ),
        ),
      ['svcgw agents servers user-access research --default deny --user 0e8d6e1c-7f26-4a3b-9d3a-1b2c3d4e5f60=allow'],
    ),
  );
  return group;
}
