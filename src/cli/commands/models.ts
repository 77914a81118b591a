import { Command } from 'commander';
import type { Column } from '../output.js';
import { FatalError } from '../fatal-error.js';
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

interface IntegrationModel {
  slug: string;
  enabled: boolean;
  is_custom: boolean;
  is_finetune: boolean;
  base_model_slug: string | null;
}

interface ModelList {
  total: number;
  allow_all_models: boolean;
  models: IntegrationModel[];
}

const MODEL_COLUMNS: Column<IntegrationModel>[] = [
  { header: 'model', value: (m) => m.slug },
  { header: 'enabled', value: (m) => (m.enabled ? 'yes' : 'no'), colour: (m) => (m.enabled ? 'green' : 'gray') },
  { header: 'custom', value: (m) => (m.is_custom ? 'yes' : '') },
  { header: 'fine-tune of', value: (m) => (m.is_finetune ? m.base_model_slug : '') },
];

/** `svcgw integrations models …`: an integration's model list (docs/models.md). */
export function integrationModelsCommand(): Command {
  const group = new Command('models').description(
    'which models an integration (and its providers) allows: list, set, remove',
  );
  const path = (slug: string) => `/v1/integrations/${enc(slug)}/models`;

  group.addCommand(
    examples(
      clientCommand('list', "show an integration's model list and allow_all_models")
        .argument('<integration>', 'integration slug or id')
        .action(
          run(async (ctx, slug: string) => {
            const body = await ctx.client.get<ModelList>(path(slug));
            ctx.out.result(body, () => {
              const rule = body.allow_all_models
                ? 'allow_all_models: true (models not listed are allowed)'
                : 'allow_all_models: false (only the models enabled here are allowed)';
              return `${rule}\n${ctx.out.table(body.models, MODEL_COLUMNS)}`;
            });
          }),
        ),
      ['svcgw integrations models list openai-main'],
    ),
  );

  group.addCommand(
    examples(
      clientCommand('set', 'enable or disable models, and choose whether models not listed are allowed')
        .argument('<integration>', 'integration slug or id')
        .option('--enable <models>', 'models to enable, comma-separated or repeated', list)
        .option('--disable <models>', 'models to disable, comma-separated or repeated', list)
        .option('--custom', 'the models given are custom ones (not in the price table)')
        .option('--only-listed', 'allow only the models enabled in the list (allow_all_models false)')
        .option('--allow-all', 'allow every model not disabled in the list (allow_all_models true)')
        .option('--data <json>', 'the body as JSON ({"models": [...], "allow_all_models": …})', jsonValue)
        .action(
          run(
            async (
              ctx: Context<{
                enable?: string[];
                disable?: string[];
                custom?: boolean;
                onlyListed?: boolean;
                allowAll?: boolean;
                data?: unknown;
              }>,
              slug: string,
            ) => {
              const o = ctx.opts;
              if (o.onlyListed && o.allowAll)
                throw new FatalError('--only-listed and --allow-all contradict each other.', 2);
              const entry = (enabled: boolean) => (model: string) =>
                defined({ slug: model, enabled, is_custom: o.custom ? true : undefined });
              const models = [...(o.enable ?? []).map(entry(true)), ...(o.disable ?? []).map(entry(false))];
              const given = o.data as { models?: unknown[] } | undefined;
              const body = {
                ...given,
                models: [...(given?.models ?? []), ...models],
                ...defined({ allow_all_models: o.onlyListed ? false : o.allowAll ? true : undefined }),
              };
              done(ctx, await ctx.client.put(path(slug), body), `Updated the model list of integration ${slug}.`);
            },
          ),
        ),
      [
        'svcgw integrations models set openai-main --enable gpt-4o-mini,gpt-4o --only-listed',
        'svcgw integrations models set openai-main --disable gpt-4.1',
        'svcgw integrations models set local-vllm --enable my-llama --custom',
      ],
    ),
  );

  group.addCommand(
    examples(
      clientCommand('remove', 'take models off the list (they then follow allow_all_models)')
        .argument('<integration>', 'integration slug or id')
        .argument('<models...>', 'model slugs')
        .action(
          run(async (ctx, slug: string, models: string[]) =>
            done(
              ctx,
              await ctx.client.delete(`${path(slug)}?slugs=${enc(models.join(','))}`),
              `Removed ${models.length} model${models.length === 1 ? '' : 's'} from integration ${slug}.`,
            ),
          ),
        ),
      ['svcgw integrations models remove openai-main gpt-4.1'],
    ),
  );
  return group;
}

interface Alias {
  id: string;
  name: string;
  model: string | null;
  config_id: string | null;
  workspace_id: string | null;
}

const ALIAS_COLUMNS: Column<Alias>[] = [
  { header: 'name', value: (a) => a.name },
  { header: 'routes to', value: (a) => a.model ?? `config ${a.config_id}` },
  { header: 'workspace', value: (a) => a.workspace_id ?? '(organisation)' },
  { header: 'id', value: (a) => a.id },
];

type AliasTarget = { model?: string; config?: string; description?: string };

/** `svcgw aliases …`: model names that route to `@slug/model` or to a config. */
export function aliasesCommand(): Command {
  const group = new Command('aliases').description(
    'model aliases (model: "default-chat" → @slug/model or a config): create, list, get, update, delete',
  );
  const scope = (workspace: string | undefined) => (workspace ? `?workspace_id=${enc(workspace)}` : '');

  group.addCommand(
    examples(
      pagingOptions(clientCommand('list', 'list aliases'))
        .option('--workspace <id|slug>', "one workspace's aliases and the organisation's")
        .action(
          run(async (ctx: Context<{ workspace?: string }>) =>
            printList<Alias>(ctx, '/v1/model-aliases', { workspace_id: ctx.opts.workspace }, ALIAS_COLUMNS),
          ),
        ),
      ['svcgw aliases list', 'svcgw aliases list --workspace team-a --json'],
    ),
  );

  group.addCommand(
    examples(
      clientCommand('get', 'show an alias')
        .argument('<name|id>', 'alias name or id')
        .option('--workspace <id|slug>', "the alias's workspace (default: the key's, else organisation-wide)")
        .action(
          run(async (ctx: Context<{ workspace?: string }>, name: string) =>
            printOne(ctx, `/v1/model-aliases/${enc(name)}${scope(ctx.opts.workspace)}`),
          ),
        ),
      ['svcgw aliases get default-chat --workspace team-a'],
    ),
  );

  group.addCommand(
    examples(
      clientCommand('create', 'create an alias to @slug/model (--model) or to a config (--config)')
        .requiredOption('--name <name>', 'the model name clients send')
        .option('--model <@slug/model>', 'the stored provider and model it routes to')
        .option('--config <slug|id>', "a config of the alias's workspace (its targets set override_params.model)")
        .option(
          '--workspace <id|slug>',
          "its workspace (default: a workspace key's own; organisation-wide for an admin key)",
        )
        .option('--organisation', 'organisation-wide (admin keys of owners and admins)')
        .option('--description <text>', 'description')
        .action(
          run(async (ctx: Context<AliasTarget & { name: string; workspace?: string; organisation?: boolean }>) => {
            const o = ctx.opts;
            if (o.organisation && o.workspace)
              throw new FatalError('--organisation and --workspace contradict each other.', 2);
            const body = {
              ...defined({ name: o.name, model: o.model, config_id: o.config, description: o.description }),
              ...(o.organisation ? { workspace_id: null } : defined({ workspace_id: o.workspace })),
            };
            const created = await ctx.client.post<{ id: string; name: string }>('/v1/model-aliases', body);
            ctx.out.result(created, () => `Created alias ${created.name} (${created.id}).`);
          }),
        ),
      [
        'svcgw aliases create --name default-chat --config chat-fallback --workspace team-a',
        'svcgw aliases create --name fast --model @openai-main/gpt-4o-mini --organisation',
      ],
    ),
  );

  group.addCommand(
    examples(
      clientCommand('update', 'point an alias elsewhere')
        .argument('<name|id>', 'alias name or id')
        .option('--model <@slug/model>', 'route to this provider and model')
        .option('--config <slug|id>', 'route to this config')
        .option('--description <text>', 'new description')
        .option('--workspace <id|slug>', "the alias's workspace (default: the key's, else organisation-wide)")
        .action(
          run(async (ctx: Context<AliasTarget & { workspace?: string }>, name: string) => {
            const o = ctx.opts;
            const body = defined({ model: o.model, config_id: o.config, description: o.description });
            done(
              ctx,
              await ctx.client.put(`/v1/model-aliases/${enc(name)}${scope(o.workspace)}`, body),
              `Updated alias ${name}.`,
            );
          }),
        ),
      ['svcgw aliases update default-chat --model @openai-main/gpt-4o --workspace team-a'],
    ),
  );

  group.addCommand(
    examples(
      clientCommand('delete', 'delete an alias: the name stops resolving at once')
        .argument('<name|id>', 'alias name or id')
        .option('--workspace <id|slug>', "the alias's workspace (default: the key's, else organisation-wide)")
        .action(
          run(async (ctx: Context<{ workspace?: string }>, name: string) =>
            done(
              ctx,
              await ctx.client.delete(`/v1/model-aliases/${enc(name)}${scope(ctx.opts.workspace)}`),
              `Deleted alias ${name}.`,
            ),
          ),
        ),
      ['svcgw aliases delete fast'],
    ),
  );
  return group;
}
