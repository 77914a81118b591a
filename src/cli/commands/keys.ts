import { Command, Option } from 'commander';
import { duration, futureTime } from '../durations.js';
import { idByName } from './by-name.js';
import { FatalError } from '../fatal-error.js';
import type { Column } from '../output.js';
import {
  clientCommand,
  defined,
  enc,
  examples,
  integer,
  jsonValue,
  list,
  pagingOptions,
  printList,
  printOne,
  run,
  done,
  type Context,
} from './common.js';
import { confirmFirst, YES_HELP } from '../confirm.js';

interface ApiKey {
  id: string;
  name: string;
  type: string;
  workspace_id: string | null;
  status: string;
  scopes: string[];
  expires_at: string | null;
  key: string;
}

const COLUMNS: Column<ApiKey>[] = [
  { header: 'id', value: (k) => k.id },
  { header: 'name', value: (k) => k.name },
  { header: 'type', value: (k) => k.type },
  { header: 'workspace', value: (k) => k.workspace_id },
  { header: 'status', value: (k) => k.status, colour: (k) => (k.status === 'active' ? 'green' : 'red') },
  { header: 'key', value: (k) => k.key },
  { header: 'expires', value: (k) => k.expires_at },
];

const CREATE_PATHS = {
  admin: '/v1/api-keys/organisation/service',
  'workspace-service': '/v1/api-keys/workspace/service',
  'workspace-user': '/v1/api-keys/workspace/user',
};
type KeyType = keyof typeof CREATE_PATHS;

interface CreateOptions {
  name: string;
  type: KeyType;
  workspace?: string;
  userId?: string;
  scopes?: string[];
  description?: string;
  expiresAt?: string;
  config?: string;
  lockConfig?: boolean;
  data?: unknown;
}

interface UpdateOptions {
  name?: string;
  description?: string;
  scopes?: string[];
  expiresAt?: string;
  /** false with --no-expiry. */
  expiry: boolean;
  resetUsage?: boolean;
  /** A slug or id with --config, false with --no-config. */
  config?: string | false;
  lockConfig?: boolean;
  unlockConfig?: boolean;
  rotationPeriod?: 'weekly' | 'monthly';
  nextRotationAt?: string;
  transition?: number;
  /** false with --no-rotation. */
  rotation: boolean;
  data?: unknown;
}

/** `rotation_policy` from the rotation flags: undefined when none was given, null to remove it. */
function rotationPolicy(o: UpdateOptions): Record<string, unknown> | null | undefined {
  const given = o.rotationPeriod !== undefined || o.nextRotationAt !== undefined || o.transition !== undefined;
  if (o.rotation === false) {
    if (given) throw new FatalError('--no-rotation removes the rotation policy: give no other rotation flag', 2);
    return null;
  }
  if (!given) return undefined;
  return defined({
    rotation_period: o.rotationPeriod,
    next_rotation_at: o.nextRotationAt,
    key_transition_period_ms: o.transition,
  });
}

/** Shown once: the raw key is in this response only. */
export function secretMessage(what: string, id: string, key: string, after = ''): string {
  return `${what} ${id}. The key, shown once (store it now):\n\n    ${key}\n${after}`;
}

export function keysCommand(): Command {
  const keys = new Command('keys').description(
    'API keys of the gateway and the admin API: create, list, get, update, delete, rotate',
  );

  keys.addCommand(
    examples(
      clientCommand('create', 'create an API key and print it once')
        .requiredOption('--name <name>', 'name of the key')
        .addOption(
          new Option('--type <type>', 'admin (organisation-wide), workspace-service or workspace-user')
            .choices(Object.keys(CREATE_PATHS))
            .default('workspace-service'),
        )
        .option(
          '--workspace <id|slug>',
          'workspace (id or slug) of a workspace key; required when calling with an admin key',
        )
        .option('--user-id <uuid>', 'user a workspace-user key acts for')
        .option('--scopes <scopes>', 'scopes, comma-separated or repeated (default: completions.write)', list)
        .option('--description <text>', 'description')
        .option('--expires-at <time>', 'expiry: ISO 8601, or a duration from now (30d)', futureTime)
        .option('--config <slug|id>', "default gateway config of the key's requests (docs/configs.md)")
        .option('--lock-config', 'with --config: requests of this key cannot name another config')
        .option('--models <patterns>', 'models the key may use: names, prefixes ending in *, @slug/*, aliases', list)
        .option('--data <json>', 'further body fields as JSON (rate_limits, usage_limits, defaults, …)', jsonValue)
        .action(
          run(async (ctx: Context<CreateOptions & { models?: string[] }>) => {
            const o = ctx.opts;
            const defaults =
              o.config || o.models
                ? {
                    defaults: defined({
                      config_id: o.config,
                      allow_config_override: o.config ? !o.lockConfig : undefined,
                      allowed_models: o.models,
                    }),
                  }
                : {};
            const body = {
              ...(o.data as object),
              ...defaults,
              ...defined({
                name: o.name,
                workspace_id: o.workspace,
                user_id: o.userId,
                scopes: o.scopes ?? (o.data as { scopes?: string[] })?.scopes ?? ['completions.write'],
                description: o.description,
                expires_at: o.expiresAt,
              }),
            };
            const created = await ctx.client.post<{ id: string; key: string }>(CREATE_PATHS[o.type], body);
            ctx.out.result(created, () => secretMessage('Created API key', created.id, created.key));
          }),
        ),
      [
        'svcgw keys create --name ci --workspace default --scopes completions.write,logs.list',
        'svcgw keys create --name app --workspace default --config prod-fallback --lock-config',
        'svcgw keys create --name ops --type admin --scopes workspaces.list,workspaces.read --json | jq -r .key',
      ],
    ),
  );

  keys.addCommand(
    examples(
      pagingOptions(clientCommand('list', 'list API keys (masked)'))
        .option('--workspace <id|slug>', 'only this workspace')
        .action(
          run(async (ctx: Context<{ workspace?: string }>) =>
            printList<ApiKey>(ctx, '/v1/api-keys', { workspace_id: ctx.opts.workspace }, COLUMNS),
          ),
        ),
      ['svcgw keys list', 'svcgw keys list --workspace default --json | jq -r ".data[].id"'],
    ),
  );

  keys.addCommand(
    examples(
      clientCommand('get', 'show one API key (masked)')
        .argument('<id|name>', 'key id, or its name when no other key has it')
        .action(
          run(async (ctx, ref: string) =>
            printOne(ctx, `/v1/api-keys/${enc(await idByName(ctx, '/v1/api-keys', ref, 'API key'))}`),
          ),
        ),
      ['svcgw keys get 7f9c…'],
    ),
  );

  keys.addCommand(
    examples(
      clientCommand('update', "change a key's name, description, scopes, expiry or rotation policy")
        .argument('<id|name>', 'key id, or its name when no other key has it')
        .option('--name <name>', 'new name')
        .option('--description <text>', 'new description')
        .option('--scopes <scopes>', 'the new scopes, comma-separated or repeated', list)
        .option('--expires-at <time>', 'expiry: ISO 8601, or a duration from now (30d)', futureTime)
        .option('--no-expiry', 'remove the expiry')
        .option('--reset-usage', 'start a new usage period now')
        .option('--config <slug|id>', 'new default gateway config (keeps the default metadata)')
        .option('--no-config', 'remove the default config')
        .option('--lock-config', 'requests of this key cannot name another config')
        .option('--unlock-config', 'requests of this key may name another config again')
        .option(
          '--models <patterns>',
          'the models the key may use (names, prefixes ending in *, @slug/*, aliases)',
          list,
        )
        .option('--all-models', 'lift the model limit: any model')
        .addOption(
          new Option('--rotation-period <period>', 'rotate the key by itself every week or month').choices([
            'weekly',
            'monthly',
          ]),
        )
        .option(
          '--next-rotation-at <time>',
          'rotate it once at this time: ISO 8601, or a duration from now (7d)',
          futureTime,
        )
        .option(
          '--transition <duration>',
          'with a rotation policy: how long the old value keeps working (1h)',
          duration,
        )
        .option('--no-rotation', 'remove the rotation policy')
        .option('--data <json>', 'further body fields as JSON', jsonValue)
        .action(
          run(async (ctx: Context<UpdateOptions & { models?: string[]; allModels?: boolean }>, ref: string) => {
            const o = ctx.opts;
            const rotation = rotationPolicy(o);
            const id = await idByName(ctx, '/v1/api-keys', ref, 'API key');
            const changesDefaults =
              typeof o.config === 'string' ||
              o.config === false ||
              o.lockConfig ||
              o.unlockConfig ||
              o.models !== undefined ||
              o.allModels;
            let defaults = {};
            if (changesDefaults) {
              // The API replaces `defaults` whole: start from the key's current ones.
              const current =
                (
                  await ctx.client.get<{
                    defaults: {
                      metadata?: object;
                      config_id?: string | null;
                      allow_config_override?: boolean;
                      allowed_models?: string[] | null;
                    } | null;
                  }>(`/v1/api-keys/${enc(id)}`)
                ).defaults ?? {};
              const next = { ...current };
              if (typeof o.config === 'string') next.config_id = o.config;
              if (o.config === false) next.config_id = null;
              if (o.lockConfig) next.allow_config_override = false;
              if (o.unlockConfig) next.allow_config_override = true;
              if (o.models !== undefined) next.allowed_models = o.models;
              if (o.allModels) next.allowed_models = null;
              defaults = { defaults: next };
            }
            const body = {
              ...(o.data as object),
              ...defaults,
              ...defined({
                name: o.name,
                description: o.description,
                scopes: o.scopes,
                expires_at: o.expiry === false ? null : o.expiresAt,
                reset_usage: o.resetUsage,
                rotation_policy: rotation,
              }),
            };
            done(ctx, await ctx.client.put(`/v1/api-keys/${enc(id)}`, body), `Updated API key ${id}.`);
          }),
        ),
      [
        'svcgw keys update 7f9c… --scopes completions.write,logs.list',
        'svcgw keys update 7f9c… --no-expiry',
        'svcgw keys update 7f9c… --config prod-fallback --lock-config',
        'svcgw keys update chat-app --models "gpt-4o*"',
        'svcgw keys update ci-deploy --rotation-period weekly --transition 1h',
      ],
    ),
  );

  keys.addCommand(
    examples(
      clientCommand('delete', 'revoke an API key: it stops working at once')
        .option('--yes', YES_HELP)
        .hook('preAction', confirmFirst('revoke API key'))
        .argument('<id|name>', 'key id, or its name when no other key has it')
        .action(
          run(async (ctx, ref: string) => {
            const id = await idByName(ctx, '/v1/api-keys', ref, 'API key');
            done(ctx, await ctx.client.delete(`/v1/api-keys/${enc(id)}`), `Revoked API key ${id}.`);
          }),
        ),
      ['svcgw keys delete 7f9c…'],
    ),
  );

  keys.addCommand(
    examples(
      clientCommand(
        'rotate',
        'issue a new value for a key and print it once; the old value works until the transition ends',
      )
        .argument('<id|name>', 'key id, or its name when no other key has it')
        .option('--transition <duration>', 'how long the old value keeps working (at least 30m; e.g. 1h, 7d)', duration)
        .addOption(new Option('--transition-ms <ms>', 'the same in milliseconds').argParser(integer(0)).hideHelp())
        .action(
          run(async (ctx: Context<{ transition?: number; transitionMs?: number }>, ref: string) => {
            const id = await idByName(ctx, '/v1/api-keys', ref, 'API key');
            if (ctx.opts.transition !== undefined && ctx.opts.transitionMs !== undefined)
              throw new FatalError('give --transition or --transition-ms, not both', 2);
            const transition = ctx.opts.transition ?? ctx.opts.transitionMs;
            const rotated = await ctx.client.post<{
              id: string;
              key: string;
              key_transition_expires_at?: string | null;
            }>(`/v1/api-keys/${enc(id)}/rotate`, defined({ key_transition_period_ms: transition }));
            const until = rotated.key_transition_expires_at
              ? `The old value works until ${rotated.key_transition_expires_at}.\n`
              : '';
            ctx.out.result(rotated, () => secretMessage('Rotated API key', rotated.id, rotated.key, until));
          }),
        ),
      [
        'svcgw keys rotate 7f9c… --transition 1h',
        'export SVCGW_API_KEY=$(svcgw keys rotate 7f9c… --json | jq -r .key)',
      ],
    ),
  );
  return keys;
}
