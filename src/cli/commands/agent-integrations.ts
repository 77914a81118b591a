import { Command, InvalidArgumentError, Option } from 'commander';
import { FatalError } from '../fatal-error.js';
import type { Column } from '../output.js';
import {
  clientCommand,
  defined,
  done,
  enc,
  examples,
  pagingOptions,
  pairs,
  printList,
  printOne,
  run,
  type Context,
} from './common.js';
import { providerKey } from './credentials-common.js';
import { archiveCommand, metadataCommand, workspaceAccessBody, type ToolResource } from './tool-commands.js';

const INTEGRATION: ToolResource = {
  path: '/v1/agent-integrations',
  noun: 'agent integration',
  argument: '<integration>',
};

interface IntegrationRow {
  id: string;
  slug: string;
  name: string;
  type: string;
  url: string;
  auth_type: string;
  sync_status: string;
  servers_count: number;
  status: string;
}

const COLUMNS: Column<IntegrationRow>[] = [
  { header: 'slug', value: (i) => i.slug },
  { header: 'name', value: (i) => i.name },
  { header: 'type', value: (i) => i.type },
  { header: 'url', value: (i) => i.url },
  { header: 'auth', value: (i) => i.auth_type },
  { header: 'sync', value: (i) => i.sync_status, colour: (i) => (i.sync_status === 'ok' ? 'green' : 'yellow') },
  { header: 'servers', value: (i) => i.servers_count },
  { header: 'status', value: (i) => i.status, colour: (i) => (i.status === 'active' ? 'green' : 'gray') },
];

interface AuthOptions {
  auth?: string;
  bearerToken?: string;
  bearerTokenStdin?: boolean;
  header?: Record<string, string>;
}

/** `--auth`, the bearer token (preferably from standard input, where `ps` does not show it) and custom headers. */
function authOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--auth <type>', 'how svcgw authenticates to the agent').choices(['none', 'headers', 'bearer']),
    )
    .option('--bearer-token <token>', 'with --auth bearer: the token (stored encrypted; prefer --bearer-token-stdin)')
    .option('--bearer-token-stdin', 'read the bearer token from standard input')
    .option('--header <name=value>', 'with --auth headers: a header sent to the agent; repeat for several', pairs);
}

/** The auth fields of a body; `--auth` is implied by a token (bearer) or headers (headers). */
async function authFields(o: AuthOptions): Promise<Record<string, unknown>> {
  const token = await providerKey({ key: o.bearerToken, keyStdin: o.bearerTokenStdin });
  const headers = o.header && Object.keys(o.header).length > 0 ? o.header : undefined;
  const auth = o.auth ?? (token ? 'bearer' : headers ? 'headers' : undefined);
  const configurations = defined({ bearer_token: token, custom_headers: headers });
  return defined({
    auth_type: auth,
    configurations: Object.keys(configurations).length > 0 ? configurations : undefined,
  });
}

function skillSwitch(value: string, previous: Array<{ id: string; enabled: boolean }> = []) {
  const match = /^(.+)=(on|off)$/.exec(value);
  if (!match) throw new InvalidArgumentError('expected <skill id>=on or <skill id>=off.');
  return [...previous, { id: match[1]!, enabled: match[2] === 'on' }];
}

/** `set-skills <ref> --skill id=on|off`, repeated: switches skills of an agent integration or server. */
export function setSkillsCommand(resource: ToolResource, description: string, example: string): Command {
  return examples(
    clientCommand('set-skills', description)
      .requiredOption('--skill <id=on|off>', 'a skill switch; repeat for several', skillSwitch)
      .argument(resource.argument, 'slug or id')
      .action(
        run(async (ctx: Context<{ skill: Array<{ id: string; enabled: boolean }> }>, ref: string) =>
          done(
            ctx,
            await ctx.client.put(`${resource.path}/${enc(ref)}/skills`, { skills: ctx.opts.skill }),
            `Updated the skills of ${resource.noun} ${ref}.`,
          ),
        ),
      ),
    [example],
  );
}

export function agentIntegrationsCommand(): Command {
  const group = new Command('integrations').description(
    'agent integrations (remote A2A agents): create, list, get, update, delete, sync, skills, workspaces',
  );
  group.addCommand(
    examples(
      authOptions(
        clientCommand('create', 'add a remote A2A agent; its card is read at once (skills, endpoint)')
          .requiredOption('--name <name>', 'name')
          .requiredOption(
            '--url <url>',
            "the agent's base URL (its card is at {url}/.well-known/agent-card.json) or its card's URL",
          )
          .option('--slug <slug>', 'slug; derived from the name when left out')
          .option('--description <text>', 'description')
          .option('--rpc-url <url>', "the agent's JSON-RPC endpoint, when it is not the one its card names")
          .option(
            '--workspace <id|slug>',
            "make it a workspace integration (default: the organisation's, with an admin key)",
          )
          .option('--global', 'organisation integrations: usable in every workspace'),
      ).action(
        run(
          async (
            ctx: Context<
              AuthOptions & {
                name: string;
                url: string;
                slug?: string;
                description?: string;
                rpcUrl?: string;
                workspace?: string;
                global?: boolean;
              }
            >,
          ) => {
            const o = ctx.opts;
            const created = await ctx.client.post<{
              id: string;
              slug: string;
              sync_status: string;
              sync_error: string | null;
            }>(
              '/v1/agent-integrations',
              defined({
                name: o.name,
                url: o.url,
                slug: o.slug,
                description: o.description,
                rpc_url: o.rpcUrl,
                workspace_id: o.workspace,
                global_workspace_access: o.global,
                ...(await authFields(o)),
              }),
            );
            ctx.out.result(created, () =>
              created.sync_status === 'ok'
                ? `Created agent integration ${created.slug} (${created.id}); its card was read.`
                : `Created agent integration ${created.slug} (${created.id}), but its card could not be read: ${created.sync_error}`,
            );
          },
        ),
      ),
      [
        'svcgw agents integrations create --name "Research agent" --url https://agents.internal/research --bearer-token-stdin --global',
      ],
    ),
  );
  group.addCommand(
    examples(
      pagingOptions(clientCommand('list', 'list agent integrations'))
        .option('--workspace <id|slug>', 'what this workspace may use')
        .addOption(
          new Option('--type <type>', 'organisation or workspace integrations').choices([
            'organisation',
            'workspace',
            'all',
          ]),
        )
        .option('--status <status>', 'active or archived', 'active')
        .option('--search <text>', 'part of the name or slug')
        .action(
          run(async (ctx: Context<{ workspace?: string; type?: string; status: string; search?: string }>) =>
            printList<IntegrationRow>(
              ctx,
              '/v1/agent-integrations',
              {
                workspace_id: ctx.opts.workspace,
                type: ctx.opts.type,
                status: ctx.opts.status,
                search: ctx.opts.search,
              },
              COLUMNS,
            ),
          ),
        ),
      ['svcgw agents integrations list'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('get', 'show an agent integration (credentials as [REDACTED])')
        .argument('<integration>', 'slug or id')
        .action(run(async (ctx, ref: string) => printOne(ctx, `/v1/agent-integrations/${enc(ref)}`))),
      ['svcgw agents integrations get research-agent'],
    ),
  );
  group.addCommand(
    examples(
      authOptions(
        clientCommand('update', 'change an agent integration; a new URL or credentials read the card again')
          .argument('<integration>', 'slug or id')
          .option('--name <name>', 'new name')
          .option('--description <text>', 'new description')
          .option('--url <url>', 'new URL')
          .option('--rpc-url <url>', "the agent's JSON-RPC endpoint")
          .option('--no-rpc-url', "use the endpoint the agent's card names again"),
      ).action(
        run(
          async (
            ctx: Context<AuthOptions & { name?: string; description?: string; url?: string; rpcUrl?: string | false }>,
            ref: string,
          ) => {
            const o = ctx.opts;
            const body = await ctx.client.put(
              `/v1/agent-integrations/${enc(ref)}`,
              defined({
                name: o.name,
                description: o.description,
                url: o.url,
                rpc_url: o.rpcUrl === false ? null : o.rpcUrl,
                ...(await authFields(o)),
              }),
            );
            done(ctx, body, `Updated agent integration ${ref}.`);
          },
        ),
      ),
      ['svcgw agents integrations update research-agent --bearer-token-stdin'],
    ),
  );
  group.addCommand(
    archiveCommand(
      INTEGRATION,
      'delete (archive) an agent integration: its servers stop answering',
      'svcgw agents integrations delete research-agent --yes',
    ),
  );
  group.addCommand(
    examples(
      clientCommand('sync', "read the agent's card again: its skills, version and endpoint")
        .argument('<integration>', 'slug or id')
        .action(
          run(async (ctx, ref: string) => {
            const body = await ctx.client.post<Record<string, unknown>>(`/v1/agent-integrations/${enc(ref)}/sync`);
            ctx.out.result(body, () => ctx.out.record(body));
          }),
        ),
      ['svcgw agents integrations sync research-agent'],
    ),
  );
  group.addCommand(
    metadataCommand(
      INTEGRATION,
      "what the agent's card said at the last sync",
      'svcgw agents integrations metadata research-agent --json',
    ),
  );
  group.addCommand(
    examples(
      pagingOptions(clientCommand('skills', "list the agent's skills and whether each is enabled"))
        .argument('<integration>', 'slug or id')
        .action(
          run(async (ctx, ref: string) =>
            printList<{ id: string; name: string; enabled: boolean }>(
              ctx,
              `/v1/agent-integrations/${enc(ref)}/skills`,
              {},
              [
                { header: 'id', value: (s) => s.id },
                { header: 'name', value: (s) => s.name },
                { header: 'enabled', value: (s) => s.enabled, colour: (s) => (s.enabled ? 'green' : 'gray') },
              ],
            ),
          ),
        ),
      ['svcgw agents integrations skills research-agent'],
    ),
  );
  group.addCommand(
    setSkillsCommand(
      INTEGRATION,
      'enable or disable skills for every server of the integration',
      'svcgw agents integrations set-skills research-agent --skill web-search=off',
    ),
  );
  group.addCommand(
    examples(
      clientCommand('workspaces', 'show, or change, which workspaces may use an organisation integration')
        .argument('<integration>', 'slug or id')
        .option('--enable <id|slug>', 'enable it in a workspace; repeat for several', collect)
        .option('--disable <id|slug>', 'disable it in a workspace; repeat for several', collect)
        .option('--global <on|off>', 'usable in every workspace that has no switch of its own')
        .option('--replace', 'clear every workspace switch first')
        .action(
          run(
            async (
              ctx: Context<{ enable?: string[]; disable?: string[]; global?: string; replace?: boolean }>,
              ref: string,
            ) => {
              const o = ctx.opts;
              const path = `/v1/agent-integrations/${enc(ref)}/workspaces`;
              if (!o.enable && !o.disable && o.global === undefined && !o.replace) return printOne(ctx, path);
              if (o.global !== undefined && o.global !== 'on' && o.global !== 'off')
                throw new FatalError('--global takes on or off', 2);
              const body = await ctx.client.put(
                path,
                workspaceAccessBody({
                  on: o.enable,
                  off: o.disable,
                  global: o.global === undefined ? undefined : o.global === 'on',
                  replace: o.replace,
                }),
              );
              done(ctx, body, `Updated the workspaces of agent integration ${ref}.`);
            },
          ),
        ),
      ['svcgw agents integrations workspaces research-agent --enable team-a'],
    ),
  );
  return group;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
