import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Command, Option } from 'commander';
import { tail } from './logs-tail.js';
import { pastTime } from '../durations.js';
import { FatalError } from '../fatal-error.js';
import { describeStatus, serverStatusCode, statusFilter, statusList, type StatusFilter } from '../status-filter.js';
import { createProgress, type Column } from '../output.js';
import { formatCost, formatLatency, formatTokens, statusColour, type LogRecord } from '../tui/format.js';
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

const COLUMNS: Column<LogRecord>[] = [
  { header: 'time', value: (r) => r.created_at },
  { header: 'status', value: (r) => r.status_code, colour: (r) => statusColour(r.status_code) },
  { header: 'provider', value: (r) => r.provider },
  { header: 'model', value: (r) => r.model },
  { header: 'tokens', value: (r) => formatTokens(r) },
  { header: 'cost', value: (r) => formatCost(r.cost) },
  { header: 'latency', value: (r) => formatLatency(r.latency_ms) },
  { header: 'id', value: (r) => r.id },
];

/** The values of `filterOptions`. */
interface FilterOptions {
  workspace?: string;
  status?: StatusFilter;
  provider?: string;
  model?: string;
}

function filterOptions(command: Command): Command {
  return command
    .option('--workspace <id|slug>', 'only this workspace')
    .option('--status <code|class>', 'only this HTTP status (429) or class (4xx, 5xx)', statusFilter)
    .option('--provider <name>', 'only this provider (openai, anthropic, …)')
    .option('--model <model>', 'only this model');
}

interface ExportItem {
  id: string;
  status: string;
  total: number;
  rows_written: number;
  workspace_id: string | null;
  created_at: string;
  description: string | null;
  error: string | null;
}

const EXPORT_COLUMNS: Column<ExportItem>[] = [
  { header: 'id', value: (e) => e.id },
  {
    header: 'status',
    value: (e) => e.status,
    colour: (e) => (e.status === 'success' ? 'green' : e.status === 'failed' ? 'red' : null),
  },
  { header: 'rows', value: (e) => `${e.rows_written}/${e.total}` },
  { header: 'workspace', value: (e) => e.workspace_id ?? 'all' },
  { header: 'created', value: (e) => e.created_at },
  { header: 'description', value: (e) => e.description },
];

/** Fields exported when --fields is left out. */
const DEFAULT_EXPORT_FIELDS = [
  'id',
  'trace_id',
  'created_at',
  'ai_org',
  'ai_model',
  'response_status_code',
  'is_success',
  'req_units',
  'res_units',
  'total_units',
  'cost',
  'cost_currency',
  'response_time',
  'metadata',
];
const POLL_MS = 500;

interface ExportCreateOptions {
  workspace?: string;
  since?: string;
  until?: string;
  apiKeyId?: string[];
  provider?: string;
  model?: string;
  status?: number[];
  metadata?: Record<string, string>;
  traceId?: string;
  fields?: string[];
  description?: string;
  start?: boolean;
  wait?: boolean;
}

function exportFiltersFrom(o: ExportCreateOptions): Record<string, unknown> {
  return defined({
    time_of_generation_min: o.since,
    time_of_generation_max: o.until,
    api_key_ids: o.apiKeyId,
    ai_org: o.provider,
    ai_model: o.model,
    status_code: o.status?.join(','),
    metadata: o.metadata,
    trace_id: o.traceId,
  });
}

/** Polls an export until it is no longer running; a failed or stopped export is exit 1. */
async function waitForExport(ctx: Context, id: string): Promise<ExportItem> {
  const progress = createProgress(`export ${id}`);
  for (;;) {
    const item = await ctx.client.get<ExportItem>(`/v1/logs/exports/${enc(id)}`);
    progress.update(item.rows_written, item.total);
    if (item.status !== 'in_progress') {
      progress.done();
      if (item.status === 'failed' || item.status === 'stopped')
        throw new FatalError(`export ${id} ${item.status}${item.error ? `: ${item.error}` : ''}`);
      return item;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Streams the file to --output (mode 0600) or to stdout, never holding it whole. */
async function download(ctx: Context<{ format: 'jsonl' | 'csv'; output?: string }>, id: string): Promise<void> {
  const res = await ctx.client.stream(
    `/v1/logs/exports/${enc(id)}/download`,
    { format: ctx.opts.format },
    new AbortController().signal,
  );
  const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>);
  if (!ctx.opts.output || ctx.opts.output === '-') {
    await pipeline(body, process.stdout, { end: false });
    return;
  }
  await pipeline(body, createWriteStream(ctx.opts.output, { mode: 0o600 }));
  process.stderr.write(`Saved export ${id} to ${ctx.opts.output}.\n`);
}

function exportCommand(): Command {
  const group = new Command('export').description(
    'log exports (DATA_EXPORTS_ENABLED, scope logs.export): create, start, cancel, status, download, list',
  );
  group.addCommand(
    examples(
      clientCommand('create', 'create a log export of the logs that match the filters; --start runs it at once')
        .option('--workspace <id|slug>', 'only this workspace (admin keys: default every workspace)')
        .option('--since <time>', 'from this time: ISO 8601, or a duration ago (1h, 7d)', pastTime)
        .option('--until <time>', 'up to this time: ISO 8601, or a duration ago (30m)', pastTime)
        .option('--api-key-id <uuid>', 'only requests made with this key (repeatable)', list)
        .option('--provider <name>', 'only this provider')
        .option('--model <model>', 'only this model')
        .option('--status <codes>', 'only these HTTP statuses or classes, comma-separated (429,5xx)', statusList)
        .option('--metadata <key=value>', 'only requests whose metadata has this pair (repeatable)', pairs)
        .option('--trace-id <id>', 'only this trace')
        .option(
          '--fields <fields>',
          `fields to export, comma-separated (default: ${DEFAULT_EXPORT_FIELDS.join(',')})`,
          list,
        )
        .option('--description <text>', 'a note shown with the export')
        .option('--start', 'start it right away')
        .option('--wait', 'with --start: wait until it has finished')
        .action(
          run(async (ctx: Context<ExportCreateOptions>) => {
            const o = ctx.opts;
            const created = await ctx.client.post<{ id: string; total: number }>(
              '/v1/logs/exports',
              defined({
                workspace_id: o.workspace,
                filters: exportFiltersFrom(o),
                requested_data: o.fields ?? DEFAULT_EXPORT_FIELDS,
                description: o.description,
              }),
            );
            if (o.start) await ctx.client.post(`/v1/logs/exports/${enc(created.id)}/start`);
            const item =
              o.start && o.wait
                ? await waitForExport(ctx, created.id)
                : await ctx.client.get<ExportItem>(`/v1/logs/exports/${enc(created.id)}`);
            ctx.out.result(item, () => `Created export ${item.id} (${item.total} logs match; ${item.status}).`);
          }),
        ),
      [
        'svcgw logs export create --since 2026-01-01T00:00:00Z --provider openai --start --wait',
        'svcgw logs export create --workspace team-a --status 429,5xx --fields id,created_at,request,response --json',
      ],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('start', 'start (or restart) an export in the background')
        .argument('<id>', 'export id')
        .option('--wait', 'wait until it has finished')
        .action(
          run(async (ctx: Context<{ wait?: boolean }>, id: string) => {
            const started = await ctx.client.post<{ message: string }>(`/v1/logs/exports/${enc(id)}/start`);
            if (ctx.opts.wait) {
              const item = await waitForExport(ctx, id);
              ctx.out.result(item, () => `Export ${id}: ${item.status}, ${item.rows_written} logs.`);
            } else ctx.out.result(started, () => `Started export ${id}.`);
          }),
        ),
      ['svcgw logs export start 0c1d… --wait'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('cancel', 'cancel a draft or running export')
        .argument('<id>', 'export id')
        .action(
          run(async (ctx, id: string) =>
            done(ctx, await ctx.client.post(`/v1/logs/exports/${enc(id)}/cancel`), `Cancelled export ${id}.`),
          ),
        ),
      ['svcgw logs export cancel 0c1d…'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('status', 'show an export: status, rows written, filters')
        .argument('<id>', 'export id')
        .option('--wait', 'wait until it is no longer running (exit 1 if it failed or was cancelled)')
        .action(
          run(async (ctx: Context<{ wait?: boolean }>, id: string) => {
            const item = ctx.opts.wait
              ? await waitForExport(ctx, id)
              : await ctx.client.get<ExportItem>(`/v1/logs/exports/${enc(id)}`);
            ctx.out.result(item, () => ctx.out.record(item as unknown as Record<string, unknown>));
          }),
        ),
      ['svcgw logs export status 0c1d… --wait'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('download', 'download a finished export, streamed to a file or stdout')
        .argument('<id>', 'export id')
        .addOption(new Option('--format <format>', 'jsonl or csv').choices(['jsonl', 'csv']).default('jsonl'))
        .option('-o, --output <path>', 'write to this file (mode 0600) instead of stdout')
        .action(run(download)),
      [
        'svcgw logs export download 0c1d… --format csv -o logs.csv',
        'svcgw logs export download 0c1d… | jq -c .ai_model',
      ],
    ),
  );
  group.addCommand(
    examples(
      pagingOptions(clientCommand('list', 'list log exports, newest first'))
        .option('--workspace <id|slug>', 'only this workspace')
        .action(
          run(async (ctx: Context<{ workspace?: string }>) =>
            printList<ExportItem>(ctx, '/v1/logs/exports', { workspace_id: ctx.opts.workspace }, EXPORT_COLUMNS),
          ),
        ),
      ['svcgw logs export list'],
    ),
  );
  return group;
}

export function logsCommand(): Command {
  const group = new Command('logs').description('request logs of the gateway: list, get, tail, export');

  group.addCommand(
    examples(
      filterOptions(pagingOptions(clientCommand('list', 'list request logs, newest first')))
        .option('--api-key-id <uuid>', 'only requests made with this key')
        .option('--endpoint-type <type>', 'only this endpoint type (chatComplete, embed, …)')
        .option('--trace-id <id>', 'only this trace')
        .option('--since <time>', 'from this time: ISO 8601, or a duration ago (1h, 7d)', pastTime)
        .option('--until <time>', 'up to this time: ISO 8601, or a duration ago (30m)', pastTime)
        .action(
          run(
            async (
              ctx: Context<
                FilterOptions & {
                  apiKeyId?: string;
                  endpointType?: string;
                  traceId?: string;
                  since?: string;
                  until?: string;
                }
              >,
            ) => {
              const o = ctx.opts;
              if (o.status && 'class' in o.status)
                throw new FatalError(
                  `--status ${describeStatus(o.status)}: the logs list API filters by one status code; for a class use logs tail or logs export create --status ${describeStatus(o.status)}`,
                  2,
                );
              const query = {
                workspace_id: o.workspace,
                status_code: serverStatusCode(o.status),
                provider: o.provider,
                model: o.model,
                api_key_id: o.apiKeyId,
                endpoint_type: o.endpointType,
                trace_id: o.traceId,
                start_time: o.since,
                end_time: o.until,
              };
              await printList<LogRecord>(ctx, '/v1/logs', query, COLUMNS);
            },
          ),
        ),
      ['svcgw logs list --status 429', 'svcgw logs list --provider openai --since 1h --all --json'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('get', 'show one request log, with bodies when they were recorded')
        .argument('<id>', 'log id')
        .addOption(
          new Option(
            '--log-format <format>',
            "flat: svcgw's record; structured: the reference's LogObject (request, response, metrics)",
          )
            .choices(['flat', 'structured'])
            .default('flat'),
        )
        .action(
          run(async (ctx: Context<{ logFormat: 'flat' | 'structured' }>, id: string) =>
            printOne(ctx, `/v1/logs/${enc(id)}`, { log_format: ctx.opts.logFormat }),
          ),
        ),
      ['svcgw logs get 0c1d…', 'svcgw logs get 0c1d… --log-format structured --json | jq .response'],
    ),
  );
  group.addCommand(
    examples(
      filterOptions(
        clientCommand(
          'tail',
          'follow requests as they happen: a live screen on a terminal (time, status, provider, model, tokens, cost, latency, error, running totals, and requests in flight); one JSON line per request when stdout is not a terminal or with --json. When the server restarts it says "reconnecting…" and connects again (backoff up to 5 s). It follows the server instance it is connected to: behind a load balancer, tail each instance.',
        ),
      )
        .summary('follow requests as they happen')
        .option('--in-flight', 'with JSON lines, also a line ({"object": "log.start", …}) as each request begins')
        .action(run(tail)),
      [
        'svcgw logs tail',
        'svcgw logs tail --status 5xx --provider openai',
        'svcgw logs tail --json | jq -c "{status_code, model, cost}"',
      ],
    ),
  );
  group.addCommand(exportCommand());
  return group;
}
