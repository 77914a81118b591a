import { Command, Option } from 'commander';
import { confirmFirst, YES_HELP } from '../confirm.js';
import { FatalError } from '../fatal-error.js';
import type { Column } from '../output.js';
import { tagOptions, tagsQuery, type TagOptions } from './credentials-common.js';
import {
  clientCommand,
  defined,
  done,
  enc,
  examples,
  list,
  pagingOptions,
  pairs,
  printList,
  printOne,
  run,
  type Context,
} from './common.js';

interface SecretReference {
  slug: string;
  name: string;
  manager_type: string;
  secret_path: string;
  secret_key: string | null;
  allow_all_workspaces: boolean;
  status: string;
}

const COLUMNS: Column<SecretReference>[] = [
  { header: 'slug', value: (r) => r.slug },
  { header: 'name', value: (r) => r.name },
  { header: 'manager', value: (r) => r.manager_type },
  { header: 'path', value: (r) => r.secret_path },
  { header: 'key', value: (r) => r.secret_key },
  { header: 'workspaces', value: (r) => (r.allow_all_workspaces ? 'all' : 'some') },
];

interface ReferenceOptions extends TagOptions {
  name?: string;
  description?: string;
  auth?: Record<string, string>;
  authSecretStdin?: string;
  path?: string;
  key?: string;
  workspace?: string[];
  allWorkspaces?: boolean;
}

/** Reads one secret of `auth_config` from standard input, so that it is in no shell history or `ps`. */
async function secretFromStdin(field: string): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  const value = text.trim();
  if (!value) throw new FatalError(`--auth-secret-stdin ${field}: standard input was empty`, 2);
  return value;
}

function referenceOptions(command: Command): Command {
  return tagOptions(
    command
      .option('--description <text>', 'description')
      .option(
        '--auth <field=value>',
        'an auth_config field (vault_auth_type=token, vault_addr=…, aws_region=…); repeat for several',
        pairs,
      )
      .option(
        '--auth-secret-stdin <field>',
        'read this auth_config field (vault_token, aws_secret_access_key, …) from standard input',
      )
      .option('--path <path>', 'secret_path: the secret in the manager (AWS name or ARN, Key Vault name, Vault path)')
      .option('--key <key>', 'secret_key: a key of a JSON secret or a field of a Vault entry')
      .option(
        '--workspace <workspaces>',
        'only these workspaces (ids or slugs) may use it; comma-separated or repeated',
        list,
      )
      .option('--all-workspaces', 'every workspace may use it'),
  );
}

async function authConfigOf(o: ReferenceOptions, base: Record<string, unknown> = {}) {
  if (!o.auth && !o.authSecretStdin) return undefined;
  const auth: Record<string, unknown> = { ...base, ...o.auth };
  if (o.authSecretStdin) auth[o.authSecretStdin] = await secretFromStdin(o.authSecretStdin);
  return auth;
}

function workspacesOf(o: ReferenceOptions) {
  if (o.workspace && o.allWorkspaces) throw new FatalError('give --workspace or --all-workspaces, not both', 2);
  if (o.workspace) return { allowed_workspaces: o.workspace };
  return o.allWorkspaces ? { allow_all_workspaces: true } : {};
}

/**
 * `svcgw secret-references`: where secrets live in AWS Secrets Manager, Azure Key Vault or
 * HashiCorp Vault. Sign-in secrets go in by flag or standard input and are never printed: the
 * server shows them masked.
 */
export function secretReferencesCommand(): Command {
  const group = new Command('secret-references').description(
    'secret references (secrets kept in AWS Secrets Manager, Azure Key Vault or HashiCorp Vault): list, get, create, update, delete',
  );
  group.addCommand(
    examples(
      pagingOptions(
        tagOptions(clientCommand('list', 'list secret references'))
          .addOption(
            new Option('--manager <type>', 'only this manager').choices(['aws_sm', 'azure_kv', 'hashicorp_vault']),
          )
          .option('--status <status>', 'active or archived', 'active'),
      ).action(
        run(async (ctx: Context<TagOptions & { manager?: string; status: string }>) =>
          printList(
            ctx,
            '/v1/secret-references',
            defined({ manager_type: ctx.opts.manager, tags: tagsQuery(ctx.opts.tag), status: ctx.opts.status }),
            COLUMNS,
          ),
        ),
      ),
      ['svcgw secret-references list --manager hashicorp_vault'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('get', 'show a secret reference (auth_config secrets masked)')
        .argument('<reference>', 'slug or id')
        .action(run(async (ctx, ref: string) => printOne(ctx, `/v1/secret-references/${enc(ref)}`))),
      ['svcgw secret-references get openai-vault --json'],
    ),
  );
  group.addCommand(
    examples(
      referenceOptions(
        clientCommand('create', 'create a secret reference')
          .requiredOption('--name <name>', 'name')
          .option('--slug <slug>', 'slug; derived from the name when left out')
          .addOption(
            new Option('--manager <type>', 'the secret manager')
              .choices(['aws_sm', 'azure_kv', 'hashicorp_vault'])
              .makeOptionMandatory(),
          ),
      ).action(
        run(async (ctx: Context<ReferenceOptions & { name: string; slug?: string; manager: string }>) => {
          const o = ctx.opts;
          if (!o.path) throw new FatalError('--path is required: the secret in the manager', 2);
          const auth = await authConfigOf(o);
          if (!auth) throw new FatalError('--auth is required: how svcgw signs in to the manager', 2);
          const created = await ctx.client.post<{ id: string; slug: string }>(
            '/v1/secret-references',
            defined({
              name: o.name,
              slug: o.slug,
              description: o.description,
              manager_type: o.manager,
              auth_config: auth,
              secret_path: o.path,
              secret_key: o.key,
              tags: o.tag,
              ...workspacesOf(o),
            }),
          );
          ctx.out.result(created, () => `Created secret reference ${created.slug} (${created.id}).`);
        }),
      ),
      [
        'svcgw secret-references create --name "OpenAI in Vault" --slug openai-vault --manager hashicorp_vault --auth vault_auth_type=token --auth vault_addr=https://vault:8200 --auth-secret-stdin vault_token --path secret/openai --key api_key < token.txt',
      ],
    ),
  );
  group.addCommand(
    examples(
      referenceOptions(
        clientCommand(
          'update',
          'change a secret reference; --auth fields are merged into the stored auth_config (secrets not given are kept)',
        )
          .argument('<reference>', 'slug or id')
          .option('--name <name>', 'new name'),
      ).action(
        run(async (ctx: Context<ReferenceOptions>, ref: string) => {
          const o = ctx.opts;
          const path = `/v1/secret-references/${enc(ref)}`;
          // The stored object comes back with its secrets masked; a mask sent back keeps the secret.
          const auth =
            o.auth || o.authSecretStdin
              ? await authConfigOf(
                  o,
                  (await ctx.client.get<{ auth_config: Record<string, unknown> }>(path)).auth_config,
                )
              : undefined;
          const body = defined({
            name: o.name,
            description: o.description,
            auth_config: auth,
            secret_path: o.path,
            secret_key: o.key,
            tags: o.tag,
            ...workspacesOf(o),
          });
          if (Object.keys(body).length === 0) throw new FatalError('nothing to change: give at least one option', 2);
          done(ctx, await ctx.client.put(path, body), `Updated secret reference ${ref}.`);
        }),
      ),
      ['svcgw secret-references update openai-vault --auth-secret-stdin vault_token < new-token.txt'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('delete', 'delete (archive) a secret reference; refused while something uses it')
        .option('--yes', YES_HELP)
        .hook('preAction', confirmFirst('delete secret reference'))
        .argument('<reference>', 'slug or id')
        .action(
          run(async (ctx, ref: string) =>
            done(ctx, await ctx.client.delete(`/v1/secret-references/${enc(ref)}`), `Deleted secret reference ${ref}.`),
          ),
        ),
      ['svcgw secret-references delete openai-vault --yes'],
    ),
  );
  return group;
}
