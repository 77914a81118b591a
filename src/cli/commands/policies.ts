import { Command, InvalidArgumentError, Option } from 'commander';
import { futureTime } from '../durations.js';
import { FatalError } from '../fatal-error.js';
import type { Column } from '../output.js';
import { idByName } from './by-name.js';
import {
  clientCommand,
  decimal,
  defined,
  done,
  enc,
  examples,
  integer,
  jsonValue,
  list,
  pagingOptions,
  printList,
  printOne,
  run,
  type Context,
} from './common.js';
import { confirmFirst, YES_HELP } from '../confirm.js';

interface Policy {
  id: string;
  name: string | null;
  type: string;
  unit?: string;
  value?: number;
  credit_limit?: number;
  periodic_reset?: string | null;
  status: string;
  workspace_id: string;
  conditions: { key: string; value: string }[];
  group_by: { key: string }[];
}

const conditionsText = (p: Policy) => p.conditions.map((c) => `${c.key}=${c.value}`).join(',');
const groupByText = (p: Policy) => p.group_by.map((g) => g.key).join(',');
const statusColumn: Column<Policy> = {
  header: 'status',
  value: (p) => p.status,
  colour: (p) => (p.status === 'active' ? 'green' : 'gray'),
};

interface Condition {
  key: string;
  value: string;
}

/** The values of `withMatching` (both mandatory on create). */
interface MatchingOptions {
  condition?: Condition[];
  groupBy?: { key: string }[];
}

type Status = 'active' | 'archived';

/** `key=value`, repeated → `[{key, value}]` (a key may repeat). */
function condition(value: string, previous: Condition[] = []): Condition[] {
  const at = value.indexOf('=');
  if (at <= 0)
    throw new InvalidArgumentError('expected key=value, such as workspace_id=default or endpoint_type=chatComplete.');
  return [...previous, { key: value.slice(0, at), value: value.slice(at + 1) }];
}
const groupBy = (value: string, previous: { key: string }[] = []): { key: string }[] => [
  ...previous,
  ...list(value).map((key) => ({ key })),
];

function withMatching(command: Command, required: boolean): Command {
  const c = new Option(
    '--condition <key=value>',
    'which requests it applies to (api_key, workspace_id, organisation_id, endpoint_type, metadata.<field>); repeat for several',
  ).argParser(condition);
  const g = new Option(
    '--group-by <key>',
    'what it counts separately (api_key, workspace_id, organisation_id, metadata.<field>); repeat or comma-separate',
  ).argParser(groupBy);
  return command.addOption(required ? c.makeOptionMandatory() : c).addOption(required ? g.makeOptionMandatory() : g);
}

/** A policy id, or the id of the one active policy with this name (else the one archived). */
async function policyId(ctx: Context, path: string, ref: string, what: string): Promise<string> {
  try {
    return await idByName(ctx, path, ref, what, { query: { status: 'active' } });
  } catch (error) {
    if (!(error instanceof FatalError) || !error.message.startsWith('no ')) throw error;
    return idByName(ctx, path, ref, what, { query: { status: 'archived' } });
  }
}

function archiveAndGet(group: Command, path: string, what: string): void {
  group.addCommand(
    examples(
      clientCommand('get', `show a ${what}`)
        .argument('<id|name>', 'policy id or name')
        .option('--include-usage', 'add the usage of every bucket (usage limits)')
        .action(
          run(async (ctx: Context<{ includeUsage?: boolean }>, ref: string) =>
            printOne(
              ctx,
              `${path}/${enc(await policyId(ctx, path, ref, what))}`,
              ctx.opts.includeUsage ? { include_usage: true } : undefined,
            ),
          ),
        ),
      [`svcgw policies ${group.name()} get 2c4f…`],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('archive', `archive a ${what} (update --status active restores it)`)
        .option('--yes', YES_HELP)
        .hook('preAction', confirmFirst(`archive ${what}`))
        .argument('<id|name>', 'policy id or name')
        .action(
          run(async (ctx, ref: string) =>
            done(
              ctx,
              await ctx.client.delete(`${path}/${enc(await policyId(ctx, path, ref, what))}`),
              `Archived ${what} ${ref}.`,
            ),
          ),
        ),
      [`svcgw policies ${group.name()} archive 2c4f…`],
    ),
  );
}

function rateLimits(): Command {
  const path = '/v1/policies/rate-limits';
  const group = new Command('rate-limits').description(
    'rate-limits policies: requests or tokens per minute, hour, day or week',
  );
  /** What create and update share; create's are all there (mandatory, or a default). */
  type RateOptions = MatchingOptions & {
    type?: 'requests' | 'tokens';
    unit?: 'rpm' | 'rph' | 'rpd' | 'rpw';
    value?: number;
  };
  const type = () => new Option('--type <type>', 'what is counted').choices(['requests', 'tokens']);
  const unit = () => new Option('--unit <unit>', 'window').choices(['rpm', 'rph', 'rpd', 'rpw']);
  const columns: Column<Policy>[] = [
    { header: 'id', value: (p) => p.id },
    { header: 'name', value: (p) => p.name },
    { header: 'limit', value: (p) => `${p.value} ${p.type}/${p.unit}` },
    { header: 'conditions', value: conditionsText },
    { header: 'group by', value: groupByText },
    statusColumn,
  ];

  group.addCommand(
    examples(
      withMatching(clientCommand('create', 'create a rate-limits policy'), true)
        .addOption(type().default('requests'))
        .addOption(unit().makeOptionMandatory())
        .requiredOption('--value <n>', 'the limit per window', decimal)
        .option('--name <name>', 'name')
        .option(
          '--workspace <id|slug>',
          'workspace it is filed in (admin key without it: organisation-wide, filed in the default workspace)',
        )
        .action(
          run(async (ctx: Context<Required<RateOptions> & { name?: string; workspace?: string }>) => {
            const o = ctx.opts;
            const created = await ctx.client.post<{ id: string }>(
              path,
              defined({
                conditions: o.condition,
                group_by: o.groupBy,
                type: o.type,
                unit: o.unit,
                value: o.value,
                name: o.name,
                workspace_id: o.workspace,
              }),
            );
            ctx.out.result(created, () => `Created rate-limits policy ${created.id}.`);
          }),
        ),
      [
        'svcgw policies rate-limits create --workspace default --name "100 chat rpm per key" --condition endpoint_type=chatComplete --group-by api_key --unit rpm --value 100',
      ],
    ),
  );
  group.addCommand(
    examples(
      pagingOptions(clientCommand('list', 'list rate-limits policies'))
        .option('--workspace <id|slug>', 'only this workspace')
        .option('--status <status>', 'active or archived', 'active')
        .addOption(type())
        .addOption(unit())
        .action(
          run(async (ctx: Context<Pick<RateOptions, 'type' | 'unit'> & { workspace?: string; status: string }>) =>
            printList<Policy>(
              ctx,
              path,
              { workspace_id: ctx.opts.workspace, status: ctx.opts.status, type: ctx.opts.type, unit: ctx.opts.unit },
              columns,
            ),
          ),
        ),
      ['svcgw policies rate-limits list --workspace default'],
    ),
  );
  group.addCommand(
    examples(
      withMatching(
        clientCommand(
          'update',
          'change a rate-limits policy; --condition and --group-by replace the stored lists',
        ).argument('<id|name>', 'policy id or name'),
        false,
      )
        .addOption(type())
        .addOption(unit())
        .option('--value <n>', 'the limit per window', decimal)
        .option('--name <name>', 'name')
        .addOption(
          new Option('--status <status>', 'active restores an archived policy').choices(['active', 'archived']),
        )
        .action(
          run(async (ctx: Context<RateOptions & { name?: string; status?: Status }>, id: string) => {
            const o = ctx.opts;
            done(
              ctx,
              await ctx.client.put(
                `${path}/${enc(await policyId(ctx, path, id, 'rate-limits policy'))}`,
                defined({
                  conditions: o.condition,
                  group_by: o.groupBy,
                  type: o.type,
                  unit: o.unit,
                  value: o.value,
                  name: o.name,
                  status: o.status,
                }),
              ),
              `Updated rate-limits policy ${id}.`,
            );
          }),
        ),
      ['svcgw policies rate-limits update 2c4f… --value 200'],
    ),
  );
  archiveAndGet(group, path, 'rate-limits policy');
  return group;
}

function usageLimits(): Command {
  const path = '/v1/policies/usage-limits';
  const group = new Command('usage-limits').description('usage-limits policies: a cost or token budget per period');
  const reset = () => new Option('--periodic-reset <period>', 'weekly or monthly').choices(['weekly', 'monthly']);
  const columns: Column<Policy>[] = [
    { header: 'id', value: (p) => p.id },
    { header: 'name', value: (p) => p.name },
    { header: 'limit', value: (p) => `${p.credit_limit} ${p.type}` },
    { header: 'reset', value: (p) => p.periodic_reset },
    { header: 'conditions', value: conditionsText },
    { header: 'group by', value: groupByText },
    statusColumn,
  ];
  const limitOptions = (command: Command) =>
    command
      .option('--credit-limit <n>', 'the budget per period (USD for cost)', decimal)
      .option('--alert-threshold <n>', 'usage that sends an alert, below the credit limit', decimal)
      .addOption(reset())
      .option(
        '--periodic-reset-days <n>',
        'reset every N days (1 to 365), instead of --periodic-reset',
        integer(1, 365),
      )
      .option('--next-reset-at <time>', 'next reset: ISO 8601, or a duration from now (7d)', futureTime)
      .option('--name <name>', 'name')
      .option('--data <json>', 'further body fields as JSON', jsonValue);
  /** The values of `limitOptions`; update's `--no-alert-threshold` makes alertThreshold false. */
  interface LimitOptions<Threshold = number> {
    creditLimit?: number;
    alertThreshold?: Threshold;
    periodicReset?: 'weekly' | 'monthly';
    periodicResetDays?: number;
    nextResetAt?: string;
    name?: string;
    data?: unknown;
  }
  const body = (o: MatchingOptions & LimitOptions<number | false>) => ({
    ...(o.data as object),
    ...defined({
      conditions: o.condition,
      group_by: o.groupBy,
      credit_limit: o.creditLimit,
      alert_threshold: o.alertThreshold,
      periodic_reset: o.periodicReset,
      periodic_reset_days: o.periodicResetDays,
      next_usage_reset_at: o.nextResetAt,
      name: o.name,
    }),
  });

  group.addCommand(
    examples(
      limitOptions(withMatching(clientCommand('create', 'create a usage-limits policy'), true))
        .addOption(new Option('--type <type>', 'what is budgeted').choices(['cost', 'tokens']).default('cost'))
        .option(
          '--workspace <id|slug>',
          'workspace it is filed in (admin key without it: organisation-wide, filed in the default workspace)',
        )
        .action(
          run(
            async (
              ctx: Context<Required<MatchingOptions> & LimitOptions & { type: 'cost' | 'tokens'; workspace?: string }>,
            ) => {
              const o = ctx.opts;
              if (o.creditLimit === undefined)
                throw new FatalError("required option '--credit-limit <n>' not specified", 2);
              const created = await ctx.client.post<{ id: string }>(path, {
                ...body(o),
                type: o.type,
                ...defined({ workspace_id: o.workspace }),
              });
              ctx.out.result(created, () => `Created usage-limits policy ${created.id}.`);
            },
          ),
        ),
      [
        "svcgw policies usage-limits create --workspace default --name '$50 a month per key' --condition workspace_id=default --group-by api_key --credit-limit 50 --alert-threshold 40 --periodic-reset monthly",
      ],
    ),
  );
  group.addCommand(
    examples(
      pagingOptions(clientCommand('list', 'list usage-limits policies'))
        .option('--workspace <id|slug>', 'only this workspace')
        .option('--status <status>', 'active or archived', 'active')
        .addOption(new Option('--type <type>', 'only this type').choices(['cost', 'tokens']))
        .action(
          run(async (ctx: Context<{ workspace?: string; status: string; type?: 'cost' | 'tokens' }>) =>
            printList<Policy>(
              ctx,
              path,
              { workspace_id: ctx.opts.workspace, status: ctx.opts.status, type: ctx.opts.type },
              columns,
            ),
          ),
        ),
      ['svcgw policies usage-limits list --type cost'],
    ),
  );
  group.addCommand(
    examples(
      limitOptions(
        withMatching(
          clientCommand(
            'update',
            'change a usage-limits policy; --condition and --group-by replace the stored lists',
          ).argument('<id|name>', 'policy id or name'),
          false,
        ),
      )
        .option('--no-alert-threshold', 'remove the alert threshold')
        .option('--no-schedule', 'remove the reset schedule (the limit becomes cumulative)')
        .addOption(
          new Option('--status <status>', 'active restores an archived policy').choices(['active', 'archived']),
        )
        .option('--reset-usage-for <value-key>', "forget one bucket's usage in the current period")
        .action(
          run(
            async (
              ctx: Context<
                MatchingOptions &
                  LimitOptions<number | false> & { schedule: boolean; status?: Status; resetUsageFor?: string }
              >,
              id: string,
            ) => {
              const o = ctx.opts;
              const patch = {
                ...body(o),
                ...(o.alertThreshold === false ? { alert_threshold: null } : {}),
                ...(o.schedule === false ? { periodic_reset: null, periodic_reset_days: null } : {}),
                ...defined({ status: o.status, reset_usage_for_value: o.resetUsageFor }),
              };
              const policy = await policyId(ctx, path, id, 'usage-limits policy');
              done(ctx, await ctx.client.put(`${path}/${enc(policy)}`, patch), `Updated usage-limits policy ${id}.`);
            },
          ),
        ),
      [
        'svcgw policies usage-limits update 9a1d… --credit-limit 80',
        'svcgw policies usage-limits update 9a1d… --reset-usage-for 7f9c…',
      ],
    ),
  );
  archiveAndGet(group, path, 'usage-limits policy');
  return group;
}

export function policiesCommand(): Command {
  return new Command('policies')
    .description('rate-limits and usage-limits policies')
    .addCommand(rateLimits())
    .addCommand(usageLimits());
}
