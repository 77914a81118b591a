import { Command } from 'commander';
import { readSseData } from '../client/sse.js';
import { FatalError } from '../fatal-error.js';
import { isTerminal, type Column } from '../output.js';
import { formatCost, formatLatency, formatTokens, statusColour, type LogRecord } from '../tui/format.js';
import { clientCommand, enc, examples, integer, isoTime, pagingOptions, printList, printOne, run, type Context } from './common.js';

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

function filterOptions(command: Command): Command {
  return command
    .option('--workspace <id|slug>', 'only this workspace')
    .option('--status <code>', 'only this HTTP status code', integer(100, 599))
    .option('--provider <name>', 'only this provider (openai, anthropic, …)')
    .option('--model <model>', 'only this model');
}

function describeFilters(opts: Record<string, unknown>): string {
  const parts = (['workspace', 'status', 'provider', 'model'] as const).filter((k) => opts[k] !== undefined).map((k) => `${k}=${String(opts[k])}`);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

/**
 * Follows `GET /v1/logs/stream`: a live screen on a terminal, JSON lines otherwise. Ctrl+C ends
 * it with exit 0; the server going away ends it with exit 1.
 */
async function tail(ctx: Context): Promise<void> {
  const o = ctx.opts;
  const controller = new AbortController();
  const stop = () => controller.abort();
  // `on`, not `once`: ink's exit handler re-raises a signal that no other listener handles.
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.stdout.on('error', stop); // a closed pipe (| head) ends the tail quietly
  try {
    const res = await ctx.client.stream('/v1/logs/stream', { workspace_id: o.workspace, status_code: o.status, provider: o.provider, model: o.model }, controller.signal);
    const events = readSseData(res.body as unknown as AsyncIterable<Uint8Array>);
    const ended = isTerminal() && !ctx.out.json ? await followOnScreen(ctx, events, controller.signal) : await followAsLines(events);
    if (!controller.signal.aborted) throw new FatalError(`the server at ${ctx.client.baseUrl} ended the stream${ended ? ` (${ended})` : ''}`);
  } catch (error) {
    if (controller.signal.aborted && !(error instanceof FatalError && error.exitCode === 2)) return;
    throw error;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

async function followAsLines(events: AsyncIterable<string>): Promise<string | null> {
  for await (const data of events) process.stdout.write(`${JSON.stringify(JSON.parse(data))}\n`);
  return null;
}

async function followOnScreen(ctx: Context, events: AsyncIterable<string>, signal: AbortSignal): Promise<string | null> {
  const [{ render }, { createElement }, { LogTailApp }] = await Promise.all([import('ink'), import('react'), import('../tui/LogTail.js')]);
  let push: ((record: LogRecord) => void) | null = null;
  let end: ((reason: string) => void) | null = null;
  const backlog: LogRecord[] = [];
  const source = (onRecord: (record: LogRecord) => void, onEnd: (reason: string) => void) => {
    push = onRecord;
    end = onEnd;
    backlog.splice(0).forEach(onRecord);
    return () => {
      push = null;
    };
  };
  const rows = Math.max(5, (process.stdout.rows ?? 24) - 6);
  const title = `svcgw logs tail · ${ctx.client.baseUrl}${describeFilters(ctx.opts)}`;
  const app = render(createElement(LogTailApp, { title, source, maxRows: rows }), { exitOnCtrlC: false, patchConsole: false });
  let reason: string | null = null;
  try {
    for await (const data of events) {
      const record = JSON.parse(data) as LogRecord;
      if (push) (push as (r: LogRecord) => void)(record);
      else backlog.push(record);
    }
    reason = 'the server closed the stream';
  } catch (error) {
    if (!signal.aborted) reason = (error as Error).message;
    throw error;
  } finally {
    if (end) (end as (r: string) => void)(signal.aborted ? 'stopped' : (reason ?? 'ended'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    app.unmount();
    await app.waitUntilExit().catch(() => undefined);
  }
  return reason;
}

export function logsCommand(): Command {
  const group = new Command('logs').description('request logs of the gateway: list, get, tail');

  group.addCommand(
    examples(
      filterOptions(pagingOptions(clientCommand('list', 'list request logs, newest first')))
        .option('--api-key-id <uuid>', 'only requests made with this key')
        .option('--endpoint-type <type>', 'only this endpoint type (chatComplete, embed, …)')
        .option('--trace-id <id>', 'only this trace')
        .option('--since <time>', 'from this ISO 8601 time', isoTime)
        .option('--until <time>', 'up to this ISO 8601 time', isoTime)
        .action(
          run(async (ctx) => {
            const o = ctx.opts;
            const query = { workspace_id: o.workspace, status_code: o.status, provider: o.provider, model: o.model, api_key_id: o.apiKeyId, endpoint_type: o.endpointType, trace_id: o.traceId, start_time: o.since, end_time: o.until };
            await printList<LogRecord>(ctx, '/v1/logs', query, COLUMNS);
          }),
        ),
      ['svcgw logs list --status 429', 'svcgw logs list --provider openai --since 2026-01-31T00:00:00Z --all --json'],
    ),
  );
  group.addCommand(examples(clientCommand('get', 'show one request log, with bodies when they were recorded').argument('<id>', 'log id').action(run(async (ctx, id: string) => printOne(ctx, `/v1/logs/${enc(id)}`))), ['svcgw logs get 0c1d…']));
  group.addCommand(
    examples(
      filterOptions(
        clientCommand(
          'tail',
          'follow requests as they happen: a live screen on a terminal (time, status, provider, model, tokens, cost, latency, running totals); one JSON line per request when stdout is not a terminal or with --json. It follows the server instance it is connected to: behind a load balancer, tail each instance.',
        ),
      )
        .summary('follow requests as they happen')
        .action(run(tail)),
      ['svcgw logs tail', 'svcgw logs tail --status 500 --provider openai', 'svcgw logs tail --json | jq -c "{status_code, model, cost}"'],
    ),
  );
  return group;
}

