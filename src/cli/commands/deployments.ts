import { Command, InvalidArgumentError, Option } from 'commander';
import type { Column } from '../output.js';
import {
  clientCommand,
  defined,
  done,
  enc,
  examples,
  jsonValue,
  list,
  pagingOptions,
  printList,
  run,
  type Context,
} from './common.js';
import { confirmFirst, YES_HELP } from '../confirm.js';

interface Deployment {
  id: string;
  slug: string;
  name: string;
  type: string;
  status: string;
  config_slug: string | null;
  allowed_workspaces: Array<{ slug: string }> | null;
  rate_limits: Array<{ type: string; unit: string; value: number }> | null;
  created_at: string;
}

interface Instance {
  id: string;
  status: string;
  version: string;
  address: string | null;
  hostname: string;
  pid: number;
  started_at: string;
  last_heartbeat_at: string;
  refusal_reason: string | null;
}

const STATUS_COLOURS: Record<string, 'green' | 'yellow' | 'red' | 'gray'> = {
  active: 'green',
  gone: 'yellow',
  refused: 'red',
  stopped: 'gray',
  archived: 'gray',
};

const COLUMNS: Column<Deployment>[] = [
  { header: 'slug', value: (d) => d.slug },
  { header: 'name', value: (d) => d.name },
  { header: 'type', value: (d) => d.type },
  { header: 'config', value: (d) => d.config_slug },
  { header: 'workspaces', value: (d) => (d.allowed_workspaces ? d.allowed_workspaces.map((w) => w.slug) : 'all') },
  { header: 'status', value: (d) => d.status, colour: (d) => STATUS_COLOURS[d.status] ?? null },
  { header: 'id', value: (d) => d.id },
];

const INSTANCE_COLUMNS: Column<Instance>[] = [
  { header: 'status', value: (i) => i.status, colour: (i) => STATUS_COLOURS[i.status] ?? null },
  { header: 'version', value: (i) => i.version },
  { header: 'address', value: (i) => i.address },
  { header: 'host', value: (i) => `${i.hostname} (pid ${i.pid})` },
  { header: 'started', value: (i) => i.started_at },
  { header: 'last heartbeat', value: (i) => i.last_heartbeat_at },
  { header: 'reason', value: (i) => i.refusal_reason },
];

/** `requests:rpm:600` or `tokens:rph:100000` → a rate_limits entry. */
function rateLimit(value: string, previous: unknown[] = []): unknown[] {
  const match = /^(requests|tokens):(rps|rpm|rph|rpd|rpw):(\d+)$/.exec(value);
  if (!match)
    throw new InvalidArgumentError('expected <requests|tokens>:<rpm|rph|rpd|rpw>:<value>, e.g. requests:rpm:600.');
  return [...previous, { type: match[1], unit: match[2], value: Number(match[3]) }];
}

const typeOption = () =>
  new Option('--type <type>', 'production or non-production').choices(['production', 'non-production']);

export function deploymentsCommand(): Command {
  const group = new Command('deployments').description(
    'deployments (named groups of gateway instances, joined with serve --deployment): create, list, get, update, delete (admin keys)',
  );

  group.addCommand(
    examples(
      clientCommand('create', 'create a deployment')
        .requiredOption('--name <name>', 'name')
        .addOption(typeOption().makeOptionMandatory())
        .option(
          '--slug <slug>',
          'slug instances join by (svcgw serve --deployment <slug>); derived from the name when left out',
        )
        .option('--description <text>', 'description')
        .option('--config <id|slug>', 'config applied to requests that name none')
        .option('--workspaces <ids|slugs>', 'the only workspaces its instances serve (default: all)', list)
        .option('--rate-limit <type:unit:value>', 'a rate limit of the whole deployment (repeatable)', rateLimit)
        .option('--data <json>', 'further body fields as JSON (usage_limits)', jsonValue)
        .action(
          run(
            async (
              ctx: Context<{
                name: string;
                type: string;
                slug?: string;
                description?: string;
                config?: string;
                workspaces?: string[];
                rateLimit?: unknown[];
                data?: unknown;
              }>,
            ) => {
              const o = ctx.opts;
              const created = await ctx.client.post<{ id: string; slug: string }>('/v1/deployments', {
                ...(o.data as object),
                ...defined({
                  name: o.name,
                  type: o.type,
                  slug: o.slug,
                  description: o.description,
                  config_id: o.config,
                  allowed_workspaces: o.workspaces,
                  rate_limits: o.rateLimit,
                }),
              });
              ctx.out.result(
                created,
                () =>
                  `Created deployment ${created.slug} (${created.id}). Start its instances with: svcgw serve --deployment ${created.slug}`,
              );
            },
          ),
        ),
      [
        'svcgw deployments create --name "EU production" --slug eu-prod --type production',
        'svcgw deployments create --name Staging --type non-production --workspaces team-a,team-b --rate-limit requests:rpm:100',
      ],
    ),
  );

  group.addCommand(
    examples(
      pagingOptions(clientCommand('list', 'list deployments'))
        .addOption(typeOption())
        .option('--status <status>', 'active or archived', 'active')
        .action(
          run(async (ctx: Context<{ type?: string; status: string }>) =>
            printList<Deployment>(ctx, '/v1/deployments', { type: ctx.opts.type, status: ctx.opts.status }, COLUMNS),
          ),
        ),
      ['svcgw deployments list', 'svcgw deployments list --type production --json'],
    ),
  );

  group.addCommand(
    examples(
      clientCommand('get', 'show a deployment and its instances (active, gone, stopped, refused)')
        .argument('<id|slug>', 'deployment id or slug')
        .action(
          run(async (ctx, id: string) => {
            const body = await ctx.client.get<Record<string, unknown> & { instances: Instance[] }>(
              `/v1/deployments/${enc(id)}`,
            );
            const { instances, ...deployment } = body;
            ctx.out.result(
              body,
              () => `${ctx.out.record(deployment)}\n\ninstances:\n${ctx.out.table(instances, INSTANCE_COLUMNS)}`,
            );
          }),
        ),
      ['svcgw deployments get eu-prod'],
    ),
  );

  group.addCommand(
    examples(
      clientCommand('update', "change a deployment's name, type, config, workspaces or limits (not its slug)")
        .argument('<id|slug>', 'deployment id or slug')
        .option('--name <name>', 'new name')
        .addOption(typeOption())
        .option('--description <text>', 'new description')
        .option('--config <id|slug>', 'config applied to requests that name none')
        .option('--no-config', 'no config of its own')
        .option('--workspaces <ids|slugs>', 'the only workspaces its instances serve', list)
        .option('--all-workspaces', 'serve every workspace')
        .option('--rate-limit <type:unit:value>', 'replace its rate limits (repeatable)', rateLimit)
        .option('--no-rate-limits', 'remove its rate limits')
        .option('--reset-usage', 'start a new usage period of its budget now')
        .option('--data <json>', 'further body fields as JSON (usage_limits)', jsonValue)
        .action(
          run(
            async (
              ctx: Context<{
                name?: string;
                type?: string;
                description?: string;
                config?: string | false;
                workspaces?: string[];
                allWorkspaces?: boolean;
                rateLimit?: unknown[];
                rateLimits?: false;
                resetUsage?: boolean;
                data?: unknown;
              }>,
              id: string,
            ) => {
              const o = ctx.opts;
              const body = {
                ...(o.data as object),
                ...defined({
                  name: o.name,
                  type: o.type,
                  description: o.description,
                  reset_usage: o.resetUsage,
                  config_id: o.config === false ? null : o.config,
                  allowed_workspaces: o.allWorkspaces ? null : o.workspaces,
                  rate_limits: o.rateLimits === false ? null : o.rateLimit,
                }),
              };
              done(ctx, await ctx.client.put(`/v1/deployments/${enc(id)}`, body), `Updated deployment ${id}.`);
            },
          ),
        ),
      [
        'svcgw deployments update eu-prod --config eu-routing',
        'svcgw deployments update staging --all-workspaces --no-rate-limits',
        'svcgw deployments update eu-prod --data \'{"usage_limits": {"credit_limit": 500, "periodic_reset": "monthly"}}\'',
      ],
    ),
  );

  group.addCommand(
    examples(
      clientCommand('delete', 'delete (archive) a deployment; refused while instances serve it')
        .option('--yes', YES_HELP)
        .hook('preAction', confirmFirst('delete deployment'))
        .argument('<id|slug>', 'deployment id or slug')
        .action(
          run(async (ctx, id: string) =>
            done(ctx, await ctx.client.delete(`/v1/deployments/${enc(id)}`), `Deleted deployment ${id}.`),
          ),
        ),
      ['svcgw deployments delete staging --yes'],
    ),
  );
  return group;
}
