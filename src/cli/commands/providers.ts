import { Command } from 'commander';
import type { Column } from '../output.js';
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
import { tagOptions, tagsQuery, type TagOptions } from './credentials-common.js';
import { confirmFirst, YES_HELP } from '../confirm.js';

interface Provider {
  id: string;
  slug: string;
  name: string;
  ai_provider_id: string;
  workspace_id: string;
  status: string;
}

const COLUMNS: Column<Provider>[] = [
  { header: 'slug', value: (p) => p.slug },
  { header: 'name', value: (p) => p.name },
  { header: 'type', value: (p) => p.ai_provider_id },
  { header: 'workspace', value: (p) => p.workspace_id },
  { header: 'status', value: (p) => p.status, colour: (p) => (p.status === 'active' ? 'green' : 'gray') },
];

export function providersCommand(): Command {
  const group = new Command('providers').description(
    "a workspace's named providers over integrations (x-service-provider: @slug): create, list, get, update, delete",
  );
  const ws = '--workspace <id|slug>';

  group.addCommand(
    examples(
      tagOptions(clientCommand('create', 'create a provider over an integration'))
        .requiredOption('--name <name>', 'name')
        .requiredOption('--integration <slug>', 'integration slug or id')
        .option('--slug <slug>', 'slug; derived from the name when left out')
        .option('--note <text>', 'note')
        .option(ws, "workspace (default: the default workspace, or the key's own)")
        .action(
          run(
            async (
              ctx: Context<
                TagOptions & { name: string; integration: string; slug?: string; note?: string; workspace?: string }
              >,
            ) => {
              const o = ctx.opts;
              const created = await ctx.client.post<{ id: string; slug: string }>(
                '/v1/providers',
                defined({
                  name: o.name,
                  integration_id: o.integration,
                  slug: o.slug,
                  note: o.note,
                  tags: o.tag,
                  workspace_id: o.workspace,
                }),
              );
              ctx.out.result(created, () => `Created provider @${created.slug} (${created.id}).`);
            },
          ),
        ),
      ['svcgw providers create --name "OpenAI for team A" --slug openai --integration openai-main --workspace team-a'],
    ),
  );
  group.addCommand(
    examples(
      tagOptions(pagingOptions(clientCommand('list', 'list providers')))
        .option(ws, 'only this workspace')
        .option('--status <status>', 'active or archived', 'active')
        .action(
          run(async (ctx: Context<TagOptions & { workspace?: string; status: string }>) =>
            printList<Provider>(
              ctx,
              '/v1/providers',
              { workspace_id: ctx.opts.workspace, status: ctx.opts.status, tags: tagsQuery(ctx.opts.tag) },
              COLUMNS,
            ),
          ),
        ),
      ['svcgw providers list --workspace team-a'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('get', 'show a provider')
        .argument('<slug>', 'slug or id')
        .option(ws, 'its workspace')
        .action(
          run(async (ctx: Context<{ workspace?: string }>, slug: string) =>
            printOne(ctx, `/v1/providers/${enc(slug)}`, { workspace_id: ctx.opts.workspace }),
          ),
        ),
      ['svcgw providers get openai --workspace team-a'],
    ),
  );
  group.addCommand(
    examples(
      tagOptions(clientCommand('update', "change a provider's name, note or tags").argument('<slug>', 'slug or id'))
        .option(ws, 'its workspace')
        .option('--name <name>', 'new name')
        .option('--note <text>', 'new note')
        .action(
          run(async (ctx: Context<TagOptions & { workspace?: string; name?: string; note?: string }>, slug: string) => {
            const o = ctx.opts;
            const workspace = o.workspace ? `?workspace_id=${enc(o.workspace)}` : '';
            done(
              ctx,
              await ctx.client.put(
                `/v1/providers/${enc(slug)}${workspace}`,
                defined({ name: o.name, note: o.note, tags: o.tag }),
              ),
              `Updated provider @${slug}.`,
            );
          }),
        ),
      ['svcgw providers update openai --workspace team-a --note "billing: team A"'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('delete', 'archive a provider')
        .option('--yes', YES_HELP)
        .hook('preAction', confirmFirst('archive provider'))
        .argument('<slug>', 'slug or id')
        .option(ws, 'its workspace')
        .action(
          run(async (ctx: Context<{ workspace?: string }>, slug: string) =>
            done(
              ctx,
              await ctx.client.delete(`/v1/providers/${enc(slug)}`, { workspace_id: ctx.opts.workspace }),
              `Archived provider @${slug}.`,
            ),
          ),
        ),
      ['svcgw providers delete openai --workspace team-a'],
    ),
  );
  return group;
}
