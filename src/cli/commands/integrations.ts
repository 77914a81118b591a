import { Command } from 'commander';
import type { Column } from '../output.js';
import {
  clientCommand,
  defined,
  done,
  enc,
  examples,
  jsonValue,
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
  tagOptions,
  tagsQuery,
  type ConfigOptions,
  type KeyOptions,
  type TagOptions,
} from './credentials-common.js';
import { confirmFirst, YES_HELP } from '../confirm.js';
import { integrationModelsCommand } from './models.js';

interface Integration {
  id: string;
  slug: string;
  name: string;
  ai_provider_id: string;
  masked_key: string | null;
  status: string;
}

/** Options of both create and update. */
type CredentialOptions = KeyOptions & TagOptions & ConfigOptions & { description?: string; data?: unknown };

const COLUMNS: Column<Integration>[] = [
  { header: 'slug', value: (i) => i.slug },
  { header: 'name', value: (i) => i.name },
  { header: 'provider', value: (i) => i.ai_provider_id },
  { header: 'key', value: (i) => i.masked_key },
  { header: 'status', value: (i) => i.status, colour: (i) => (i.status === 'active' ? 'green' : 'gray') },
  { header: 'id', value: (i) => i.id },
];

export function integrationsCommand(): Command {
  const group = new Command('integrations').description(
    'organisation-wide provider credentials: create, list, get, update, delete, models',
  );

  group.addCommand(
    examples(
      configOptions(
        tagOptions(
          keyOptions(
            clientCommand('create', 'store a provider credential (and, by default, a provider for it in a workspace)')
              .requiredOption('--name <name>', 'name')
              .requiredOption(
                '--provider <id>',
                'provider type (openai, anthropic, azure-openai, …; see GET /v1/providers/catalog)',
              )
              .option('--slug <slug>', 'slug; derived from the name when left out')
              .option('--description <text>', 'description'),
          ),
        ),
      )
        .option('--workspace <id|slug>', 'workspace of the default provider (default: the default workspace)')
        .option('--no-default-provider', 'do not create a provider for it')
        .option('--default-provider-slug <slug>', 'slug of the default provider')
        .option('--data <json>', 'further body fields as JSON', jsonValue)
        .action(
          run(
            async (
              ctx: Context<
                CredentialOptions & {
                  name: string;
                  provider: string;
                  slug?: string;
                  workspace?: string;
                  defaultProvider: boolean;
                  defaultProviderSlug?: string;
                }
              >,
            ) => {
              const o = ctx.opts;
              const body = {
                ...(o.data as object),
                ...defined({
                  name: o.name,
                  ai_provider_id: o.provider,
                  slug: o.slug,
                  description: o.description,
                  key: await providerKey(o),
                  configurations: providerConfigurations(o),
                  tags: o.tag,
                  workspace_id: o.workspace,
                  default_provider_slug: o.defaultProviderSlug,
                }),
                ...(o.defaultProvider === false ? { create_default_provider: false } : {}),
              };
              const created = await ctx.client.post<{ id: string; slug: string }>('/v1/integrations', body);
              ctx.out.result(created, () => `Created integration ${created.slug} (${created.id}).`);
            },
          ),
        ),
      [
        'printf %s "$OPENAI_API_KEY" | svcgw integrations create --name OpenAI --slug openai-main --provider openai --key-stdin',
        'svcgw integrations create --name Local --provider ollama --custom-host http://127.0.0.1:11434 --no-default-provider',
      ],
    ),
  );

  group.addCommand(
    examples(
      tagOptions(pagingOptions(clientCommand('list', 'list integrations')))
        .option('--status <status>', 'active or archived', 'active')
        .action(
          run(async (ctx: Context<TagOptions & { status: string }>) =>
            printList<Integration>(
              ctx,
              '/v1/integrations',
              { status: ctx.opts.status, tags: tagsQuery(ctx.opts.tag) },
              COLUMNS,
            ),
          ),
        ),
      ['svcgw integrations list', 'svcgw integrations list --tag env=prod --json'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('get', 'show an integration (key masked)')
        .argument('<slug>', 'slug or id')
        .action(run(async (ctx, slug: string) => printOne(ctx, `/v1/integrations/${enc(slug)}`))),
      ['svcgw integrations get openai-main'],
    ),
  );

  group.addCommand(
    examples(
      configOptions(
        tagOptions(
          keyOptions(
            clientCommand('update', 'change an integration; --custom-host/--config and --tag replace the stored sets')
              .argument('<slug>', 'slug or id')
              .option('--name <name>', 'new name')
              .option('--description <text>', 'new description'),
          ),
        ),
      )
        .option('--remove-key', 'remove the stored key')
        .option('--data <json>', 'further body fields as JSON', jsonValue)
        .action(
          run(async (ctx: Context<CredentialOptions & { name?: string; removeKey?: boolean }>, slug: string) => {
            const o = ctx.opts;
            const key = o.removeKey ? null : await providerKey(o);
            const body = {
              ...(o.data as object),
              ...defined({
                name: o.name,
                description: o.description,
                key,
                configurations: providerConfigurations(o),
                tags: o.tag,
              }),
            };
            done(ctx, await ctx.client.put(`/v1/integrations/${enc(slug)}`, body), `Updated integration ${slug}.`);
          }),
        ),
      ['printf %s "$NEW_KEY" | svcgw integrations update openai-main --key-stdin'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('delete', 'archive an integration and its providers')
        .option('--yes', YES_HELP)
        .hook('preAction', confirmFirst('archive (with its providers) integration'))
        .argument('<slug>', 'slug or id')
        .action(
          run(async (ctx, slug: string) =>
            done(ctx, await ctx.client.delete(`/v1/integrations/${enc(slug)}`), `Archived integration ${slug}.`),
          ),
        ),
      ['svcgw integrations delete openai-main'],
    ),
  );
  group.addCommand(integrationModelsCommand());
  return group;
}
