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
  jsonValue,
  pagingOptions,
  pairs,
  printList,
  printOne,
  run,
  type Context,
} from './common.js';

interface PromptSummary {
  id: string;
  slug: string;
  name: string;
  model: string | null;
  workspace_id: string;
  status: string;
}

const COLUMNS: Column<PromptSummary>[] = [
  { header: 'slug', value: (p) => p.slug },
  { header: 'name', value: (p) => p.name },
  { header: 'model', value: (p) => p.model ?? '' },
  { header: 'workspace', value: (p) => p.workspace_id },
  { header: 'status', value: (p) => p.status, colour: (p) => (p.status === 'active' ? 'green' : 'gray') },
];

/**
 * A template file: its text as it is, except a .json/.yaml/.yml file holding an array of chat
 * messages, which becomes the JSON text of a chat template.
 */
export async function readTemplateFile(path: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new FatalError(`cannot read ${path}: ${(error as Error).message}`, 2);
  }
  if (!/\.(json|ya?ml)$/i.test(path)) return text;
  const { parse } = await import('yaml');
  let parsed: unknown;
  try {
    parsed = parse(text);
  } catch (error) {
    throw new FatalError(`${path} is neither JSON nor YAML: ${(error as Error).message}`, 2);
  }
  if (!Array.isArray(parsed)) throw new FatalError(`${path} must hold an array of chat messages`, 2);
  return JSON.stringify(parsed);
}

interface ContentOptions {
  file?: string;
  model?: string;
  virtualKey?: string;
  parameters?: unknown;
  raw?: boolean;
  description?: string;
}

const contentOptions = (command: Command) =>
  command
    .option('-f, --file <path>', 'the template: text, or a .json/.yaml file of chat messages')
    .option('--model <model>', 'model (a name, or @provider/model)')
    .option('--virtual-key <slug>', 'the provider that runs it: @provider-slug or a virtual key slug')
    .option('--parameters <json>', 'model parameters as JSON (temperature, max_tokens, …)', jsonValue)
    .option('--raw', 'the text is a completion prompt, not a chat message')
    .option('--description <text>', 'description of the version');

async function contentBody(o: ContentOptions) {
  return defined({
    string: o.file ? await readTemplateFile(o.file) : undefined,
    model: o.model,
    virtual_key: o.virtualKey,
    parameters: o.parameters,
    is_raw_template: o.raw ? 1 : undefined,
    version_description: o.description,
  });
}

interface RunOptions {
  var?: Record<string, string>;
  variables?: unknown;
  set?: Record<string, string>;
}

/** `--var k=v` (strings) and `--variables <json>`; `--set k=v` hyperparameters (JSON values where they parse). */
function runBody(o: RunOptions) {
  const hyper = Object.fromEntries(
    Object.entries(o.set ?? {}).map(([key, value]) => {
      try {
        return [key, JSON.parse(value) as unknown];
      } catch {
        return [key, value];
      }
    }),
  );
  return {
    variables: { ...((o.variables as Record<string, unknown> | undefined) ?? {}), ...(o.var ?? {}) },
    ...(Object.keys(hyper).length > 0 ? { hyperparameters: hyper } : {}),
  };
}

const runOptions = (command: Command) =>
  command
    .argument('<prompt>', 'id or slug, optionally @version, @latest or @label')
    .option('--var <name=value>', 'a template variable (repeatable)', pairs)
    .option('--variables <json>', 'template variables as a JSON object', jsonValue)
    .option('--set <name=value>', 'a request field over the stored ones (repeatable; JSON values allowed)', pairs);

export function promptsCommand(): Command {
  const group = new Command('prompts').description(
    'prompt templates: list, get, create, update (new versions), render, run',
  );

  group.addCommand(
    examples(
      pagingOptions(clientCommand('list', 'list prompts'))
        .option('--workspace <id|slug>', 'only this workspace')
        .option('--collection <id|slug>', 'only this collection')
        .option('--search <text>', 'name or slug contains')
        .action(
          run(async (ctx: Context<{ workspace?: string; collection?: string; search?: string }>) =>
            printList<PromptSummary>(
              ctx,
              '/v1/prompts',
              { workspace_id: ctx.opts.workspace, collection_id: ctx.opts.collection, search: ctx.opts.search },
              COLUMNS,
            ),
          ),
        ),
      ['svcgw prompts list --search support'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('get', 'show a prompt at its default version (or @version, @latest, @label)')
        .argument('<prompt>', 'id or slug, optionally @version, @latest or @label')
        .action(run(async (ctx, ref: string) => printOne(ctx, `/v1/prompts/${enc(ref)}`))),
      ['svcgw prompts get support-reply@production --json'],
    ),
  );
  group.addCommand(
    examples(
      contentOptions(
        clientCommand('create', 'create a prompt from a template file')
          .requiredOption('--name <name>', 'name')
          .option('--slug <slug>', 'slug; derived from the name when left out')
          .option('--workspace <id|slug>', "workspace (default: the default workspace, or the key's own)")
          .option('--collection <id|slug>', "collection (default: the workspace's default one)"),
      ).action(
        run(
          async (
            ctx: Context<ContentOptions & { name: string; slug?: string; workspace?: string; collection?: string }>,
          ) => {
            const o = ctx.opts;
            if (!o.file) throw new FatalError('--file is required: the template to save', 2);
            const created = await ctx.client.post<{ id: string; slug: string; version_id: string }>(
              '/v1/prompts',
              defined({
                name: o.name,
                slug: o.slug,
                workspace_id: o.workspace,
                collection_id: o.collection,
                ...(await contentBody(o)),
              }),
            );
            ctx.out.result(created, () => `Created prompt ${created.slug} (${created.id}), version 1.`);
          },
        ),
      ),
      ['svcgw prompts create --name "Support reply" -f support.yaml --model gpt-4o-mini --virtual-key @openai-prod'],
    ),
  );
  group.addCommand(
    examples(
      contentOptions(
        clientCommand('update', 'rename a prompt, or save a new version (fields left out keep their values)')
          .argument('<prompt>', 'id or slug')
          .option('--name <name>', 'new name')
          .option('--publish', 'make the new version the default one'),
      ).action(
        run(async (ctx: Context<ContentOptions & { name?: string; publish?: boolean }>, ref: string) => {
          const o = ctx.opts;
          const content = await contentBody(o);
          const body = Object.keys(content).length > 0 ? { patch: true, ...content } : {};
          const updated = await ctx.client.put<{ prompt_version_id: string }>(
            `/v1/prompts/${enc(ref)}`,
            defined({ ...body, name: o.name }),
          );
          if (o.publish) {
            const version = await ctx.client.get<{ prompt_version: number }>(
              `/v1/prompts/${enc(ref)}/versions/${enc(updated.prompt_version_id)}`,
            );
            await ctx.client.put(`/v1/prompts/${enc(ref)}/makeDefault`, { version: version.prompt_version });
          }
          done(ctx, updated, `Updated prompt ${ref}${o.publish ? ' and published the new version' : ''}.`);
        }),
      ),
      ['svcgw prompts update support-reply --parameters \'{"temperature":0.2}\' --publish'],
    ),
  );
  group.addCommand(
    examples(
      runOptions(clientCommand('render', 'print the request body a prompt makes')).action(
        run(async (ctx: Context<RunOptions>, ref: string) => {
          const rendered = await ctx.client.post<{ data: unknown }>(
            `/v1/prompts/${enc(ref)}/render`,
            runBody(ctx.opts),
          );
          ctx.out.write(JSON.stringify(ctx.out.json ? rendered : rendered.data, null, 2));
        }),
      ),
      ['svcgw prompts render support-reply --var question="How do I rotate keys?"'],
    ),
  );
  group.addCommand(
    examples(
      runOptions(clientCommand('run', "run a prompt through the gateway and print the model's answer")).action(
        run(async (ctx: Context<RunOptions>, ref: string) => {
          const answer = await ctx.client.post<{
            choices?: Array<{ message?: { content?: unknown }; text?: string }>;
          }>(`/v1/prompts/${enc(ref)}/completions`, runBody(ctx.opts));
          const first = answer.choices?.[0];
          const content = first?.message?.content ?? first?.text ?? '';
          ctx.out.result(answer, () => (typeof content === 'string' ? content : JSON.stringify(content)));
        }),
      ),
      ['svcgw prompts run support-reply@production --var question="Hi" --set max_tokens=200'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('versions', 'list the versions of a prompt')
        .argument('<prompt>', 'id or slug')
        .action(run(async (ctx, ref: string) => printOne(ctx, `/v1/prompts/${enc(ref)}/versions`))),
      ['svcgw prompts versions support-reply'],
    ),
  );
  return group;
}
