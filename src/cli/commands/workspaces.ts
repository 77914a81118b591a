import { Command } from 'commander';
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
  printOne,
  run,
  type Context,
} from './common.js';
import { confirmFirst, YES_HELP } from '../confirm.js';

interface Workspace {
  id: string;
  slug: string;
  name: string;
  status: string;
  is_default: boolean;
  created_at: string;
}

const COLUMNS: Column<Workspace>[] = [
  { header: 'slug', value: (w) => w.slug },
  { header: 'name', value: (w) => w.name },
  { header: 'id', value: (w) => w.id },
  { header: 'status', value: (w) => w.status, colour: (w) => (w.status === 'active' ? 'green' : 'gray') },
  { header: 'default', value: (w) => (w.is_default ? 'yes' : '') },
  { header: 'created', value: (w) => w.created_at },
];

export function workspacesCommand(): Command {
  const group = new Command('workspaces').description(
    'workspaces of the organisation: create, list, get, update, archive, unarchive (admin keys)',
  );

  group.addCommand(
    examples(
      clientCommand('create', 'create a workspace')
        .requiredOption('--name <name>', 'name')
        .option('--slug <slug>', 'slug (lower-case letters, digits, - and _); derived from the name when left out')
        .option('--description <text>', 'description')
        .option('--data <json>', 'further body fields as JSON (usage_limits)', jsonValue)
        .action(
          run(async (ctx: Context<{ name: string; slug?: string; description?: string; data?: unknown }>) => {
            const o = ctx.opts;
            const created = await ctx.client.post<Workspace>('/v1/workspaces', {
              ...(o.data as object),
              ...defined({ name: o.name, slug: o.slug, description: o.description }),
            });
            ctx.out.result(created, () => `Created workspace ${created.slug} (${created.id}).`);
          }),
        ),
      ['svcgw workspaces create --name "Team A" --slug team-a'],
    ),
  );

  group.addCommand(
    examples(
      pagingOptions(clientCommand('list', 'list workspaces'))
        .option('--status <status>', 'active, archived or active,archived', 'active')
        .action(
          run(async (ctx: Context<{ status: string }>) =>
            printList<Workspace>(ctx, '/v1/workspaces', { status: ctx.opts.status }, COLUMNS),
          ),
        ),
      ['svcgw workspaces list', 'svcgw workspaces list --all --json'],
    ),
  );

  group.addCommand(
    examples(
      clientCommand('get', 'show a workspace')
        .argument('<id|slug>', 'workspace id or slug')
        .action(run(async (ctx, id: string) => printOne(ctx, `/v1/workspaces/${enc(id)}`))),
      ['svcgw workspaces get default'],
    ),
  );

  group.addCommand(
    examples(
      clientCommand('update', "change a workspace's name, description or usage limits")
        .argument('<id|slug>', 'workspace id or slug')
        .option('--name <name>', 'new name')
        .option('--description <text>', 'new description')
        .option('--reset-usage', 'start a new usage period now')
        .option(
          '--models <patterns>',
          "the models the workspace's keys may use (names, prefixes ending in *, @slug/*)",
          list,
        )
        .option('--all-models', 'lift the model limit: any model')
        .option('--data <json>', 'further body fields as JSON (usage_limits)', jsonValue)
        .action(
          run(
            async (
              ctx: Context<{
                name?: string;
                description?: string;
                resetUsage?: boolean;
                models?: string[];
                allModels?: boolean;
                data?: unknown;
              }>,
              id: string,
            ) => {
              const o = ctx.opts;
              const models = o.allModels ? null : o.models;
              const body = {
                ...(o.data as object),
                ...defined({ name: o.name, description: o.description, reset_usage: o.resetUsage }),
                ...(models !== undefined ? { defaults: { allowed_models: models } } : {}),
              };
              done(ctx, await ctx.client.put(`/v1/workspaces/${enc(id)}`, body), `Updated workspace ${id}.`);
            },
          ),
        ),
      [
        'svcgw workspaces update team-a --name "Team A (EU)"',
        'svcgw workspaces update team-a --models "@openai-main/*,default-chat"',
        'svcgw workspaces update team-a --data \'{"usage_limits": {"credit_limit": 100, "periodic_reset": "monthly"}}\'',
      ],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('archive', 'archive a workspace: its keys are refused until it is unarchived; nothing is deleted')
        .option('--yes', YES_HELP)
        .hook('preAction', confirmFirst('archive workspace'))
        .argument('<id|slug>', 'workspace id or slug')
        .action(
          run(async (ctx, id: string) =>
            done(ctx, await ctx.client.delete(`/v1/workspaces/${enc(id)}`), `Archived workspace ${id}.`),
          ),
        ),
      ['svcgw workspaces archive team-a'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('unarchive', 'bring an archived workspace back; its keys work again at once')
        .argument('<id|slug>', 'workspace id or slug')
        .action(
          run(async (ctx, id: string) => {
            const body = await ctx.client.post<Workspace>(`/v1/workspaces/${enc(id)}/unarchive`, {});
            ctx.out.result(body, () => `Unarchived workspace ${body.slug}.`);
          }),
        ),
      ['svcgw workspaces unarchive team-a'],
    ),
  );
  return group;
}
