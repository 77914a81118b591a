import { Argument, Command, InvalidArgumentError, Option } from 'commander';
import { pastTime } from '../durations.js';
import { COLUMN_NAMES, GROUP_BYS } from '../../admin/analytics/columns.js';
import { METRIC_NAMES } from '../../admin/analytics/graphs.js';
import type { Column } from '../output.js';
import { clientCommand, enc, examples, list, pagingOptions, pairs, printList, run, type Context } from './common.js';

/** The values of `filterOptions`. */
interface FilterOptions {
  since?: string;
  until?: string;
  workspace?: string;
  apiKeyId?: string;
  provider?: string;
  model?: string;
  statusCode?: string[];
  metadata?: Record<string, string>;
}

/** The filters every analytics command takes, as in the API. */
function filterOptions(command: Command): Command {
  return command
    .option(
      '--since <time>',
      'from this time: ISO 8601, or a duration ago (1h, 7d) (default: 7 days before --until)',
      pastTime,
    )
    .option('--until <time>', 'up to this time: ISO 8601, or a duration ago (default: now)', pastTime)
    .option('--workspace <id-or-slug>', 'only this workspace (admin keys; workspace keys always see their own)')
    .option('--api-key-id <uuid>', 'only requests made with this API key')
    .option('--provider <type>', 'only this provider type (openai, anthropic, …)')
    .option('--model <model>', 'only this model')
    .option('--status-code <codes>', 'only these HTTP status codes (comma-separated, repeatable)', statusCodes)
    .option('--metadata <key=value>', 'only requests whose metadata has this pair (repeatable)', pairs);
}

function statusCodes(value: string, previous: string[] = []): string[] {
  const codes = list(value, previous);
  if (!codes.every((code) => /^\d{3}$/.test(code)))
    throw new InvalidArgumentError('expected HTTP status codes such as 500,429.');
  return codes;
}

function filterQuery(ctx: Context<FilterOptions>): Record<string, string | undefined> {
  const o = ctx.opts;
  return {
    start_time: o.since,
    end_time: o.until,
    workspace_id: o.workspace,
    api_key_id: o.apiKeyId,
    provider: o.provider,
    model: o.model,
    status_code: o.statusCode?.join(','),
    metadata: o.metadata ? JSON.stringify(o.metadata) : undefined,
  };
}

const value = (name: string): Column<Record<string, unknown>> => ({
  header: name.replace(/_/g, ' '),
  value: (row) => row[name],
});

export function analyticsCommand(): Command {
  const group = new Command('analytics').description(
    'request analytics: summary, grouped figures and time series (analytics.view)',
  );

  group.addCommand(
    examples(
      filterOptions(
        clientCommand('summary', 'requests, cost, tokens, latency percentiles, errors and cache hits of a window'),
      ).action(
        run(async (ctx: Context<FilterOptions>) => {
          const body = await ctx.client.get<{ summary: Record<string, unknown>; start_time: string; end_time: string }>(
            '/v1/analytics/summary',
            filterQuery(ctx),
          );
          ctx.out.result(body, () => ctx.out.record({ from: body.start_time, to: body.end_time, ...body.summary }));
        }),
      ),
      [
        'svcgw analytics summary --since 2026-01-01T00:00:00Z --workspace team-a',
        'svcgw analytics summary --model gpt-4o --metadata env=prod --json',
      ],
    ),
  );

  group.addCommand(
    examples(
      pagingOptions(filterOptions(clientCommand('groups', 'requests grouped by a dimension, most first')))
        .addArgument(new Argument('<groupBy>', 'what to group by').choices(GROUP_BYS))
        .option('--columns <names>', `extra columns, comma-separated: ${COLUMN_NAMES.join(', ')}`, columnList)
        .option('--logs', 'ask /v1/logs/groups (scope logs.list) instead of /v1/analytics/groups')
        .action(
          run(async (ctx: Context<FilterOptions & { columns?: string[]; logs?: boolean }>, groupBy: string) => {
            const columns = ctx.opts.columns ?? [];
            const path = `/v1/${ctx.opts.logs ? 'logs' : 'analytics'}/groups/${enc(groupBy)}`;
            const shown = [
              value(groupBy),
              ...(groupBy === 'workspace' ? [value('workspace_slug')] : []),
              value('requests'),
              ...columns.map(value),
            ];
            await printList<Record<string, unknown>>(
              ctx,
              path,
              { ...filterQuery(ctx), columns: columns.length > 0 ? columns.join(',') : undefined },
              shown,
            );
          }),
        ),
      [
        'svcgw analytics groups model --columns cost,avg_latency,p95_latency',
        'svcgw analytics groups workspace --all --json',
      ],
    ),
  );

  group.addCommand(
    examples(
      filterOptions(
        clientCommand('timeseries', 'one metric over time, in hourly or daily buckets (empty ones included)'),
      )
        .addArgument(new Argument('<metric>', 'the graph').choices(METRIC_NAMES))
        .addOption(
          new Option('--interval <interval>', 'bucket size (default: hour up to 2 days, else day)').choices([
            'hour',
            'day',
          ]),
        )
        .action(
          run(async (ctx: Context<FilterOptions & { interval?: 'hour' | 'day' }>, metric: string) => {
            const body = await ctx.client.get<{
              summary: Record<string, unknown>;
              data_points: Record<string, unknown>[];
            }>(`/v1/analytics/graphs/${metric}`, { ...filterQuery(ctx), interval: ctx.opts.interval });
            const fields = Object.keys(body.data_points[0] ?? { timestamp: null });
            ctx.out.result(
              body,
              () => `${ctx.out.table(body.data_points, fields.map(value))}\n\n${ctx.out.record(body.summary)}`,
            );
          }),
        ),
      [
        'svcgw analytics timeseries requests --interval hour --since 24h',
        'svcgw analytics timeseries latency --model gpt-4o --json',
      ],
    ),
  );
  return group;
}

function columnList(value: string, previous: string[] = []): string[] {
  const names = list(value, previous);
  const unknown = names.filter((name) => !(COLUMN_NAMES as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw new InvalidArgumentError(`unknown column ${unknown.join(', ')}; use ${COLUMN_NAMES.join(', ')}.`);
  return names;
}
