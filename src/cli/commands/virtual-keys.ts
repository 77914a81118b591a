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
import {
  configOptions,
  keyOptions,
  providerConfigurations,
  providerKey,
  type ConfigOptions,
  type KeyOptions,
} from './credentials-common.js';
import { confirmFirst, YES_HELP } from '../confirm.js';

interface VirtualKey {
  id: string;
  slug: string;
  name: string;
  provider: string;
  masked_key: string | null;
  workspace_id: string;
  status: string;
}

const COLUMNS: Column<VirtualKey>[] = [
  { header: 'slug', value: (v) => v.slug },
  { header: 'name', value: (v) => v.name },
  { header: 'provider', value: (v) => v.provider },
  { header: 'key', value: (v) => v.masked_key },
  { header: 'workspace', value: (v) => v.workspace_id },
  { header: 'status', value: (v) => v.status, colour: (v) => (v.status === 'active' ? 'green' : 'gray') },
];

export function virtualKeysCommand(): Command {
  const group = new Command('virtual-keys').description(
    'legacy virtual keys (x-service-virtual-key): create, list, get, update, delete',
  );

  group.addCommand(
    examples(
      configOptions(keyOptions(clientCommand('create', 'store a provider key as a virtual key')))
        .requiredOption('--name <name>', 'name')
        .requiredOption('--provider <id>', 'provider type (openai, anthropic, …)')
        .option('--slug <slug>', 'slug; derived from the name when left out')
        .option('--note <text>', 'note')
        .option('--workspace <id|slug>', "workspace (default: the default workspace, or the key's own)")
        .action(
          run(
            async (
              ctx: Context<
                KeyOptions &
                  ConfigOptions & { name: string; provider: string; slug?: string; note?: string; workspace?: string }
              >,
            ) => {
              const o = ctx.opts;
              const created = await ctx.client.post<{ id: string; slug: string }>(
                '/v1/virtual-keys',
                defined({
                  name: o.name,
                  provider: o.provider,
                  key: await providerKey(o),
                  slug: o.slug,
                  note: o.note,
                  workspace_id: o.workspace,
                  configurations: providerConfigurations(o),
                }),
              );
              ctx.out.result(created, () => `Created virtual key ${created.slug} (${created.id}).`);
            },
          ),
        ),
      ['printf %s "$OPENAI_API_KEY" | svcgw virtual-keys create --name openai --provider openai --key-stdin'],
    ),
  );
  group.addCommand(
    examples(
      pagingOptions(clientCommand('list', 'list virtual keys'))
        .option('--workspace <id|slug>', 'only this workspace')
        .option('--status <status>', 'active or archived', 'active')
        .action(
          run(async (ctx: Context<{ workspace?: string; status: string }>) =>
            printList<VirtualKey>(
              ctx,
              '/v1/virtual-keys',
              { workspace_id: ctx.opts.workspace, status: ctx.opts.status },
              COLUMNS,
            ),
          ),
        ),
      ['svcgw virtual-keys list'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('get', 'show a virtual key (key masked)')
        .argument('<slug>', 'slug or id')
        .action(run(async (ctx, slug: string) => printOne(ctx, `/v1/virtual-keys/${enc(slug)}`))),
      ['svcgw virtual-keys get openai'],
    ),
  );
  group.addCommand(
    examples(
      configOptions(
        keyOptions(
          clientCommand('update', 'change a virtual key; --custom-host/--config replace the stored settings').argument(
            '<slug>',
            'slug or id',
          ),
        ),
      )
        .option('--name <name>', 'new name')
        .option('--note <text>', 'new note')
        .action(
          run(async (ctx: Context<KeyOptions & ConfigOptions & { name?: string; note?: string }>, slug: string) => {
            const o = ctx.opts;
            done(
              ctx,
              await ctx.client.put(
                `/v1/virtual-keys/${enc(slug)}`,
                defined({
                  name: o.name,
                  note: o.note,
                  key: await providerKey(o),
                  configurations: providerConfigurations(o),
                }),
              ),
              `Updated virtual key ${slug}.`,
            );
          }),
        ),
      ['svcgw virtual-keys update openai --note "rotated in March"'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('delete', 'archive a virtual key')
        .option('--yes', YES_HELP)
        .hook('preAction', confirmFirst('archive virtual key'))
        .argument('<slug>', 'slug or id')
        .action(
          run(async (ctx, slug: string) =>
            done(ctx, await ctx.client.delete(`/v1/virtual-keys/${enc(slug)}`), `Archived virtual key ${slug}.`),
          ),
        ),
      ['svcgw virtual-keys delete openai'],
    ),
  );
  return group;
}
