import { Command, InvalidArgumentError, Option } from 'commander';
import { createClient, type Client } from '../client/http-client.js';
import { createOutput, createProgress, type Column, type Output } from '../output.js';
import { resolveConnection } from '../profiles.js';

/** The options every client command has: the connection (`clientCommand`) and paging (`pagingOptions`). */
export interface CommonOptions {
  baseUrl?: string;
  apiKey?: string;
  profile?: string;
  json?: boolean;
  pageSize?: number;
  page?: number;
  all?: boolean;
}

/**
 * What an action gets: `O` names the options its command adds, as commander produces them
 * (a parser's result type, `string[]` for lists, `boolean` for flags).
 */
export interface Context<O extends object = object> {
  client: Client;
  out: Output;
  opts: Readonly<CommonOptions & O>;
}

/** `--base-url`, `--api-key`, `--profile` and `--json`: every command that talks to a server has them. */
export function clientCommand(name: string, description: string): Command {
  return new Command(name)
    .description(description)
    .addOption(
      new Option('--base-url <url>', "the svcgw server's URL (default: the profile's, else http://127.0.0.1:8787)").env(
        'SVCGW_BASE_URL',
      ),
    )
    .addOption(
      new Option('--api-key <key>', "API key to send as x-service-api-key (default: the profile's)").env(
        'SVCGW_API_KEY',
      ),
    )
    .addOption(new Option('--profile <name>', 'profile saved by svcgw login').env('SVCGW_PROFILE'))
    .option('--json', 'print JSON for scripts instead of text');
}

/**
 * Wraps an action: resolves the connection from the flags and hands the positional arguments on.
 * The action declares its options once, by annotating its context: `(ctx: Context<{ status?: number }>, id: string)`.
 */
export function run<O extends object = object, A extends unknown[] = []>(
  fn: (ctx: Context<O>, ...args: A) => Promise<void>,
) {
  return async (...params: unknown[]): Promise<void> => {
    // commander calls an action with (...arguments, options, command).
    const command = params.at(-1) as Command;
    // The one place where commander's untyped option values meet the types the action declared.
    const opts = command.opts<CommonOptions & O>();
    let client: Client | undefined;
    const ctx: Context<O> = {
      get client() {
        client ??= createClient(
          resolveConnection({ baseUrl: opts.baseUrl, apiKey: opts.apiKey, profile: opts.profile }),
        );
        return client;
      },
      out: createOutput(opts.json === true),
      opts,
    };
    await fn(ctx, ...(params.slice(0, -2) as A));
  };
}

const EXAMPLES = new WeakMap<Command, string[]>();

export function examples(command: Command, lines: string[]): Command {
  EXAMPLES.set(command, lines);
  return command.addHelpText('after', `\nExamples:\n${lines.map((line) => `  ${line}`).join('\n')}`);
}

/** A group's help shows the first example of each of its commands. */
export function groupExamples(group: Command): Command {
  const lines = group.commands.flatMap((sub) => EXAMPLES.get(sub)?.slice(0, 1) ?? []);
  return lines.length > 0 && !EXAMPLES.has(group) ? examples(group, lines) : group;
}

export function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^-?\d+$/.test(value) || n < min || n > max)
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max}.`);
    return n;
  };
}

export function decimal(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('expected a number.');
  return n;
}

/** `a,b c` → `['a', 'b', 'c']`, accumulated over repeated flags. */
export function list(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(/[\s,]+/).filter(Boolean)];
}

/** Repeated `key=value` (or `key:value`) flags → an object. */
export function pairs(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const match = /^([^=:]+)[=:](.*)$/.exec(value);
  if (!match) throw new InvalidArgumentError('expected key=value.');
  return { ...previous, [match[1]!]: match[2]! };
}

export function jsonValue(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('expected JSON.');
  }
}

/** Drops undefined fields, so that an update sends only what was given. */
export function defined<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export interface ListBody<T> {
  object: 'list';
  total: number;
  data: T[];
}

/** `--page-size`, `--page` and `--all` of every list. */
export function pagingOptions(command: Command, maxPageSize = 1000): Command {
  return command
    .option('--page-size <n>', `items per page (1 to ${maxPageSize})`, integer(1, maxPageSize), 50)
    .option('--page <n>', '0-based page number', integer(0), 0)
    .option('--all', 'fetch every page (progress is shown on a terminal)');
}

/** Reads one page, or with `--all` every page, of a list endpoint. */
export async function fetchList<T>(
  ctx: Context,
  path: string,
  query: Record<string, string | number | boolean | undefined>,
): Promise<ListBody<T>> {
  const pageSize: number = ctx.opts.pageSize ?? 50;
  if (!ctx.opts.all)
    return ctx.client.get<ListBody<T>>(path, { ...query, page_size: pageSize, current_page: ctx.opts.page ?? 0 });
  const progress = createProgress(`fetching ${path}`);
  const data: T[] = [];
  let total: number;
  for (let page = 0; ; page++) {
    const body = await ctx.client.get<ListBody<T>>(path, { ...query, page_size: pageSize, current_page: page });
    data.push(...body.data);
    total = body.total;
    progress.update(data.length, total);
    if (body.data.length < pageSize || data.length >= total) break;
  }
  progress.done();
  return { object: 'list', total, data };
}

export async function printList<T>(
  ctx: Context,
  path: string,
  query: Record<string, string | number | boolean | undefined>,
  columns: Column<T>[],
): Promise<void> {
  const body = await fetchList<T>(ctx, path, query);
  ctx.out.result(body, () => {
    const table = ctx.out.table(body.data, columns);
    return body.data.length < body.total
      ? `${table}\n${body.data.length} of ${body.total}${(body as { total_is_lower_bound?: boolean }).total_is_lower_bound ? ' or more' : ''} shown (use --page or --all)`
      : table;
  });
}

export async function printOne(
  ctx: Context,
  path: string,
  query?: Record<string, string | number | boolean | undefined>,
): Promise<void> {
  const body = await ctx.client.get<Record<string, unknown>>(path, query);
  ctx.out.result(body, () => ctx.out.record(body));
}

/** Mutations that answer `{}` print a short confirmation, or `{}` itself with --json. */
export function done(ctx: Context, body: unknown, message: string): void {
  ctx.out.result(body ?? {}, () => message);
}

export const enc = encodeURIComponent;
