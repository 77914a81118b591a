import type { Command } from 'commander';
import { KNOWN_CONFIGURATION_FIELDS } from '../../admin/credentials/schemas.js';
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

/** The values of `configOptions`. */
export interface ConfigOptions {
  config?: Record<string, string>;
  customHost?: string;
}

/** The provider settings the gateway's adapters read, as the server's schema names them. */
export const KNOWN_CONFIG_FIELDS = KNOWN_CONFIGURATION_FIELDS;

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

/**
 * `--custom-host` and `--config`: the provider's settings. The provider's URL has a flag of its
 * own so that nobody reaches for `--base-url`, which is always the svcgw server's URL.
 */
export function configOptions(command: Command): Command {
  return command
    .option(
      '--custom-host <url>',
      "the provider's URL, e.g. http://127.0.0.1:11434 for a local Ollama (stored as custom_host; not --base-url, which is the svcgw server)",
    )
    .option(
      '--config <field=value>',
      'a provider setting (azure_resource_name, openai_organization, …; an unknown field is refused); repeat for several',
      pairs,
    );
}

/**
 * The `configurations` body field from `--custom-host` and `--config`, or undefined when neither
 * was given. Unknown fields are refused here, before anything is sent, as the server would
 * refuse them.
 */
export function providerConfigurations(opts: ConfigOptions): Record<string, string> | undefined {
  const config = { ...opts.config };
  const unknown = Object.keys(config).filter((field) => !KNOWN_CONFIG_FIELDS.includes(field));
  if (unknown.length > 0)
    throw new FatalError(
      `--config: unknown provider setting ${unknown.join(', ')}; known settings: ${KNOWN_CONFIG_FIELDS.join(', ')}`,
      2,
    );
  if (opts.customHost !== undefined) {
    if (config.custom_host !== undefined && config.custom_host !== opts.customHost)
      throw new FatalError('give the provider URL once: --custom-host or --config custom_host=…, not both', 2);
    config.custom_host = opts.customHost;
  }
  return Object.keys(config).length > 0 ? config : undefined;
}

/** `{env: 'prod'}` → `env:prod`, the tags filter of list queries. */
export const tagsQuery = (tags: Record<string, string> | undefined) =>
  tags
    ? Object.entries(tags)
        .map(([k, v]) => `${k}:${v}`)
        .join(',')
    : undefined;
