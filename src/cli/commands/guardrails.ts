import { Command } from 'commander';
import { isUuid } from '../../lib/ids.js';
import { FatalError } from '../fatal-error.js';
import type { Column } from '../output.js';
import { confirmFirst, YES_HELP } from '../confirm.js';
import { readConfigFile } from './configs.js';
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
  type ListBody,
} from './common.js';

interface GuardrailSummary {
  id: string;
  slug: string;
  name: string;
  workspace_id: string | null;
  status: string;
}

const COLUMNS: Column<GuardrailSummary>[] = [
  { header: 'slug', value: (g) => g.slug },
  { header: 'name', value: (g) => g.name },
  { header: 'owner', value: (g) => g.workspace_id ?? 'organisation' },
  { header: 'status', value: (g) => g.status, colour: (g) => (g.status === 'active' ? 'green' : 'gray') },
];

/**
 * The API takes an id or a slug; the CLI also takes a name. A name is looked up among the
 * guardrails the key can see; one that matches several is a usage error (exit 2) listing them.
 */
async function guardrailRef(ctx: Context, ref: string): Promise<string> {
  if (isUuid(ref)) return ref;
  const all: GuardrailSummary[] = [];
  for (const status of ['active', 'archived']) {
    for (let page = 0; ; page++) {
      const body = await ctx.client.get<ListBody<GuardrailSummary>>('/v1/guardrails', {
        status,
        page_size: 1000,
        current_page: page,
      });
      all.push(...body.data);
      if (body.data.length < 1000) break;
    }
  }
  if (all.some((g) => g.slug === ref)) return ref;
  const named = all.filter((g) => g.name === ref);
  if (named.length === 1) return named[0]!.id;
  if (named.length > 1)
    throw new FatalError(
      `${named.length} guardrails are named ${ref}; give a slug:\n${named.map((g) => `  ${g.slug}`).join('\n')}`,
      2,
    );
  return ref; // the API answers 404 for it
}

/** `{checks, actions}` from a JSON or YAML file. */
async function readGuardrailFile(path: string): Promise<{ checks?: unknown; actions?: unknown }> {
  const body = await readConfigFile(path);
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new FatalError(`${path} must hold an object with checks (and actions)`, 2);
  const { checks, actions, ...rest } = body as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length > 0)
    throw new FatalError(`${path}: unknown field ${extra.join(', ')} (the file holds checks and actions)`, 2);
  return defined({ checks, actions });
}

export function guardrailsCommand(): Command {
  const group = new Command('guardrails').description(
    'guardrails (checks run on requests and answers): create, list, get, update, delete, versions',
  );

  group.addCommand(
    examples(
      clientCommand('create', 'create a guardrail from a JSON or YAML file of {checks, actions}')
        .requiredOption('--name <name>', 'name')
        .requiredOption('-f, --file <path>', 'checks and actions (JSON or YAML; - for standard input)')
        .option('--slug <slug>', 'slug; derived from the name when left out')
        .option(
          '--workspace <id|slug>',
          "workspace (default: the organisation for an admin key, the key's own workspace otherwise)",
        )
        .action(
          run(async (ctx: Context<{ name: string; file: string; slug?: string; workspace?: string }>) => {
            const o = ctx.opts;
            const created = await ctx.client.post<{ id: string; slug: string; version_id: string }>(
              '/v1/guardrails',
              defined({ name: o.name, slug: o.slug, workspace_id: o.workspace, ...(await readGuardrailFile(o.file)) }),
            );
            ctx.out.result(
              created,
              () => `Created guardrail ${created.slug} (${created.id}), version ${created.version_id}.`,
            );
          }),
        ),
      ['svcgw guardrails create --name "No secrets" --slug no-secrets -f no-secrets.yaml'],
    ),
  );
  group.addCommand(
    examples(
      pagingOptions(clientCommand('list', 'list guardrails'))
        .option('--workspace <id|slug>', "what this workspace can use (its own and the organisation's)")
        .option('--status <status>', 'active or archived', 'active')
        .action(
          run(async (ctx: Context<{ workspace?: string; status: string }>) =>
            printList<GuardrailSummary>(
              ctx,
              '/v1/guardrails',
              { workspace_id: ctx.opts.workspace, status: ctx.opts.status },
              COLUMNS,
            ),
          ),
        ),
      ['svcgw guardrails list'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('get', 'show a guardrail with its checks and actions')
        .argument('<guardrail>', 'slug, id or name')
        .action(run(async (ctx, ref: string) => printOne(ctx, `/v1/guardrails/${enc(await guardrailRef(ctx, ref))}`))),
      ['svcgw guardrails get no-secrets --json'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('update', 'rename a guardrail, or change its checks and actions from a file (a new version)')
        .argument('<guardrail>', 'slug, id or name')
        .option('--name <name>', 'new name')
        .option('-f, --file <path>', 'the new checks and actions (JSON or YAML)')
        .action(
          run(async (ctx: Context<{ name?: string; file?: string }>, ref: string) => {
            const o = ctx.opts;
            const contents = o.file ? await readGuardrailFile(o.file) : {};
            const body = await ctx.client.put<{ version_id: string }>(
              `/v1/guardrails/${enc(await guardrailRef(ctx, ref))}`,
              defined({ name: o.name, ...contents }),
            );
            ctx.out.result(body, () => `Updated guardrail ${ref} (version ${body.version_id}).`);
          }),
        ),
      ['svcgw guardrails update no-secrets -f no-secrets.yaml'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('delete', 'delete (archive) a guardrail: configs naming it stop finding it')
        .option('--yes', YES_HELP)
        .hook('preAction', confirmFirst('delete guardrail'))
        .argument('<guardrail>', 'slug, id or name')
        .action(
          run(async (ctx, ref: string) =>
            done(
              ctx,
              await ctx.client.delete(`/v1/guardrails/${enc(await guardrailRef(ctx, ref))}`),
              `Deleted guardrail ${ref}.`,
            ),
          ),
        ),
      ['svcgw guardrails delete no-secrets --yes'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('versions', 'list the versions of a guardrail')
        .argument('<guardrail>', 'slug, id or name')
        .action(
          run(async (ctx, ref: string) =>
            printOne(ctx, `/v1/guardrails/${enc(await guardrailRef(ctx, ref))}/versions`),
          ),
        ),
      ['svcgw guardrails versions no-secrets --json'],
    ),
  );
  return group;
}
