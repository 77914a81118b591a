import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { FatalError } from '../fatal-error.js';
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
import { confirmFirst, YES_HELP } from '../confirm.js';

interface ConfigSummary {
  id: string;
  slug: string;
  name: string;
  version: number;
  workspace_id: string;
  status: string;
}

const COLUMNS: Column<ConfigSummary>[] = [
  { header: 'slug', value: (c) => c.slug },
  { header: 'name', value: (c) => c.name },
  { header: 'version', value: (c) => String(c.version) },
  { header: 'workspace', value: (c) => c.workspace_id },
  { header: 'status', value: (c) => c.status, colour: (c) => (c.status === 'active' ? 'green' : 'gray') },
];

/** The config object from a JSON or YAML file (`-` reads standard input). */
export async function readConfigFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = path === '-' ? await readStdin() : await readFile(path, 'utf8');
  } catch (error) {
    throw new FatalError(`cannot read ${path}: ${(error as Error).message}`, 2);
  }
  const { parse } = await import('yaml'); // YAML is a superset of JSON: one parser for both
  try {
    return parse(text);
  } catch (error) {
    throw new FatalError(`${path} is neither JSON nor YAML: ${(error as Error).message}`, 2);
  }
}

async function readStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  return text;
}

export function configsCommand(): Command {
  const group = new Command('configs').description(
    'gateway configs (routing, retries, cache): create, list, get, update, archive, versions',
  );

  group.addCommand(
    examples(
      clientCommand('create', 'create a config from a JSON or YAML file of the config object')
        .requiredOption('--name <name>', 'name')
        .requiredOption('-f, --file <path>', 'the config object (JSON or YAML; - for standard input)')
        .option('--slug <slug>', 'slug; derived from the name when left out')
        .option('--workspace <id|slug>', "workspace (default: the default workspace, or the key's own)")
        .action(
          run(async (ctx: Context<{ name: string; file: string; slug?: string; workspace?: string }>) => {
            const o = ctx.opts;
            const created = await ctx.client.post<{ id: string; slug: string; version_id: string }>(
              '/v1/configs',
              defined({ name: o.name, slug: o.slug, workspace_id: o.workspace, config: await readConfigFile(o.file) }),
            );
            ctx.out.result(
              created,
              () => `Created config ${created.slug} (${created.id}), version ${created.version_id}.`,
            );
          }),
        ),
      ['svcgw configs create --name "Prod fallback" --slug prod-fallback -f fallback.yaml'],
    ),
  );
  group.addCommand(
    examples(
      pagingOptions(clientCommand('list', 'list configs'))
        .option('--workspace <id|slug>', 'only this workspace')
        .option('--status <status>', 'active or archived', 'active')
        .action(
          run(async (ctx: Context<{ workspace?: string; status: string }>) =>
            printList<ConfigSummary>(
              ctx,
              '/v1/configs',
              { workspace_id: ctx.opts.workspace, status: ctx.opts.status },
              COLUMNS,
            ),
          ),
        ),
      ['svcgw configs list'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('get', 'show a config with its latest version')
        .argument('<slug>', 'slug or id')
        .action(run(async (ctx, slug: string) => printOne(ctx, `/v1/configs/${enc(slug)}`))),
      ['svcgw configs get prod-fallback --json'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('update', 'rename a config, or make a new version of it from a file')
        .argument('<slug>', 'slug or id')
        .option('--name <name>', 'new name')
        .option('-f, --file <path>', 'the new config object (JSON or YAML): a new version')
        .action(
          run(async (ctx: Context<{ name?: string; file?: string }>, slug: string) => {
            const o = ctx.opts;
            const config = o.file ? await readConfigFile(o.file) : undefined;
            done(
              ctx,
              await ctx.client.put(`/v1/configs/${enc(slug)}`, defined({ name: o.name, config })),
              `Updated config ${slug}.`,
            );
          }),
        ),
      ['svcgw configs update prod-fallback -f fallback.yaml'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('archive', 'archive a config')
        .option('--yes', YES_HELP)
        .hook('preAction', confirmFirst('archive config'))
        .argument('<slug>', 'slug or id')
        .action(
          run(async (ctx, slug: string) =>
            done(ctx, await ctx.client.delete(`/v1/configs/${enc(slug)}`), `Archived config ${slug}.`),
          ),
        ),
      ['svcgw configs archive prod-fallback'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('versions', 'list the versions of a config, or show one of them')
        .argument('<slug>', 'slug or id')
        .argument('[version]', 'a version number or id')
        .action(
          run(async (ctx, slug: string, version?: string) =>
            printOne(ctx, `/v1/configs/${enc(slug)}/versions${version ? `/${enc(version)}` : ''}`),
          ),
        ),
      ['svcgw configs versions prod-fallback', 'svcgw configs versions prod-fallback 1 --json'],
    ),
  );
  return group;
}
