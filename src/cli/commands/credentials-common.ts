import type { Command } from 'commander';
import { FatalError } from '../fatal-error.js';
import { pairs } from './common.js';

/** The values of `keyOptions`. */
export interface KeyOptions {
  key?: string;
  keyStdin?: boolean;
}

/** The value of `tagOptions` (with its default name). */
export interface TagOptions {
  tag?: Record<string, string>;
}

/** The value of `configOptions`. */
export interface ConfigOptions {
  config?: Record<string, string>;
}

/** `--key` or `--key-stdin`: the provider key, preferably not on the command line where `ps` shows it. */
export function keyOptions(command: Command): Command {
  return command
    .option('--key <key>', 'the provider API key (stored encrypted; prefer --key-stdin)')
    .option('--key-stdin', 'read the provider API key from standard input');
}

export async function providerKey(
  opts: KeyOptions,
  stdin: NodeJS.ReadableStream = process.stdin,
): Promise<string | undefined> {
  if (opts.key !== undefined && opts.keyStdin) throw new FatalError('give either --key or --key-stdin, not both', 2);
  if (!opts.keyStdin) return opts.key;
  let text = '';
  for await (const chunk of stdin) text += String(chunk);
  const key = text.trim();
  if (key.length === 0) throw new FatalError('--key-stdin: standard input was empty', 2);
  return key;
}

export function tagOptions(command: Command, what = 'tag'): Command {
  return command.option(`--${what} <key=value>`, 'a tag; repeat for several', pairs);
}

export function configOptions(command: Command): Command {
  return command.option(
    '--config <field=value>',
    'a provider setting (custom_host, azure_resource_name, …); repeat for several',
    pairs,
  );
}

/** `{env: 'prod'}` → `env:prod`, the tags filter of list queries. */
export const tagsQuery = (tags: Record<string, string> | undefined) =>
  tags
    ? Object.entries(tags)
        .map(([k, v]) => `${k}:${v}`)
        .join(',')
    : undefined;
