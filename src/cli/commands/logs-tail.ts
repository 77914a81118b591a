import { setTimeout as sleep } from 'node:timers/promises';
import { readSseEvents } from '../client/sse.js';
import { FatalError } from '../fatal-error.js';
import { isTerminal } from '../output.js';
import { describeStatus, serverStatusCode, statusMatches, type StatusFilter } from '../status-filter.js';
import type { InFlight, LogRecord } from '../tui/format.js';
import type { Context } from './common.js';

/** The values of the tail's filter options. */
export interface TailOptions {
  workspace?: string;
  status?: StatusFilter;
  provider?: string;
  model?: string;
  inFlight?: boolean;
}

/** Waits between reconnections: doubling from half a second up to five. */
const backoffMs = (attempt: number) => Math.min(5000, 500 * 2 ** Math.max(0, attempt - 1));

function describeFilters(opts: TailOptions): string {
  const values = {
    workspace: opts.workspace,
    status: opts.status && describeStatus(opts.status),
    provider: opts.provider,
    model: opts.model,
  };
  const parts = Object.entries(values)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${v}`);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

/** Where a tail's events go: the live screen or JSON lines. */
interface View {
  record(record: LogRecord): void;
  start(start: InFlight): void;
  /** A line about the connection (reconnecting…), or null once it is back. */
  status(text: string | null): void;
  close(): Promise<void>;
}

/**
 * Follows `GET /v1/logs/stream`: a live screen on a terminal, JSON lines otherwise. When the
 * stream ends or the server cannot be reached (a restart), it says so and connects again with
 * backoff; a refusal (HTTP 4xx: a bad key, a missing scope) ends it with exit 1. Ctrl+C ends it
 * with exit 0.
 */
export async function tail(ctx: Context<TailOptions>): Promise<void> {
  const o = ctx.opts;
  const controller = new AbortController();
  const signal = controller.signal;
  const stop = () => controller.abort();
  // `on`, not `once`: ink's exit handler re-raises a signal that no other listener handles.
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.stdout.on('error', stop); // a closed pipe (| head) ends the tail quietly
  const screen = isTerminal() && !ctx.out.json;
  const showStarts = screen || o.inFlight === true;
  const query = {
    workspace_id: o.workspace,
    status_code: serverStatusCode(o.status),
    provider: o.provider,
    model: o.model,
    in_flight: showStarts ? 'true' : undefined,
  };
  const view = screen ? await screenView(ctx) : linesView(o.inFlight === true);
  try {
    for (let attempt = 0; !signal.aborted;) {
      let reason: string;
      try {
        const res = await ctx.client.stream('/v1/logs/stream', query, signal);
        if (attempt > 0) view.status(null);
        attempt = 0;
        for await (const event of readSseEvents(res.body as unknown as AsyncIterable<Uint8Array>)) {
          if (event.event === 'start') view.start(JSON.parse(event.data) as InFlight);
          else {
            const record = JSON.parse(event.data) as LogRecord;
            if (o.status === undefined || statusMatches(o.status, record.status_code)) view.record(record);
          }
        }
        reason = 'the server closed the stream';
      } catch (error) {
        if (signal.aborted) break;
        const status = (error as { status?: number }).status;
        if (status !== undefined && status >= 400 && status < 500) throw error;
        reason = error instanceof FatalError ? error.message : `the stream broke (${(error as Error).message})`;
      }
      if (signal.aborted) break;
      attempt++;
      const wait = backoffMs(attempt);
      view.status(`reconnecting… ${reason}; next try in ${(wait / 1000).toFixed(1)} s`);
      await sleep(wait, undefined, { signal }).catch(() => undefined);
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await view.close();
  }
}

/** JSON lines on stdout (records; starts with --in-flight); connection news on stderr. */
function linesView(starts: boolean): View {
  return {
    record: (record) => process.stdout.write(`${JSON.stringify(record)}\n`),
    start: (start) => {
      if (starts) process.stdout.write(`${JSON.stringify(start)}\n`);
    },
    status: (text) => process.stderr.write(`svcgw: ${text ?? 'reconnected'}\n`),
    close: async () => undefined,
  };
}

async function screenView(ctx: Context<TailOptions>): Promise<View> {
  const [{ render }, { createElement }, { LogTailApp }] = await Promise.all([
    import('ink'),
    import('react'),
    import('../tui/LogTail.js'),
  ]);
  type Handlers = {
    record: (r: LogRecord) => void;
    status: (s: string | null) => void;
    start: (s: InFlight) => void;
  };
  let handlers: Handlers | null = null;
  // Events that arrive before the screen subscribed, replayed once it does.
  const backlog: Array<(h: Handlers) => void> = [];
  const source = (
    record: Handlers['record'],
    status: Handlers['status'],
    start: Handlers['start'] = () => undefined,
  ) => {
    handlers = { record, status, start };
    for (const replay of backlog.splice(0)) replay(handlers);
    return () => {
      handlers = null;
    };
  };
  const send = (fn: (h: Handlers) => void) => (handlers ? fn(handlers) : backlog.push(fn));
  const rows = Math.max(5, (process.stdout.rows ?? 24) - 6);
  const title = `svcgw logs tail · ${ctx.client.baseUrl}${describeFilters(ctx.opts)}`;
  const app = render(createElement(LogTailApp, { title, source, maxRows: rows, width: process.stdout.columns ?? 80 }), {
    exitOnCtrlC: false,
    patchConsole: false,
  });
  return {
    record: (record) => send((h) => h.record(record)),
    start: (start) => send((h) => h.start(start)),
    status: (text) => send((h) => h.status(text)),
    close: async () => {
      send((h) => h.status('stopped'));
      await new Promise((resolve) => setTimeout(resolve, 20));
      app.unmount();
      await app.waitUntilExit().catch(() => undefined);
    },
  };
}
