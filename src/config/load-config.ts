import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { envName, flagName, settingsSchema, type Config, type SettingName } from './schema.js';

/** A setting that cannot be used; the message names the setting and where it came from. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Source = 'flag' | 'env' | 'file' | 'default';

export interface LoadConfigInput {
  /** Parsed CLI flags, keyed by setting name (snake_case). */
  flags?: Partial<Record<SettingName | 'config', unknown>>;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

const settingKeys = Object.keys(settingsSchema.shape) as SettingName[];

/** Resolves settings with precedence flags > SVCGW_* env > settings file > defaults. */
export function loadConfig({ flags = {}, env = process.env, cwd = process.cwd() }: LoadConfigInput = {}): Config {
  const chosenPath = pick(flags.config) ?? pick(env.SVCGW_CONFIG);
  const configPath = typeof chosenPath === 'string' ? chosenPath : null;
  const file = configPath ? readSettingsFile(resolve(cwd, configPath)) : {};

  const merged: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  for (const key of settingKeys) {
    const candidates: Array<[Source, unknown, string]> = [
      ['flag', flags[key], flagName(key)],
      ['env', env[envName(key)], envName(key)],
      ['file', file[key], `${configPath} → ${key}`],
    ];
    for (const [, value, label] of candidates) {
      if (pick(value) !== undefined) {
        merged[key] = value;
        sources[key] = label;
        break;
      }
    }
  }

  const parsed = settingsSchema.safeParse(merged);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? '');
      const from = sources[key] ? ` (from ${sources[key]})` : '';
      return `  ${key || '(root)'}${from}: ${issue.message}`;
    });
    throw new ConfigError(`invalid settings:\n${lines.join('\n')}`);
  }
  const config: Config = { ...parsed.data, data_dir: resolve(cwd, parsed.data.data_dir), config_file: configPath ? resolve(cwd, configPath) : null };
  return Object.freeze(config);
}

function pick(value: unknown): unknown {
  return value === undefined || value === null || value === '' ? undefined : value;
}

function readSettingsFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read settings file ${path}: ${(error as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`settings file ${path} is not valid JSON: ${(error as Error).message}`);
  }
  const shape = z.record(z.string(), z.unknown()).safeParse(data);
  if (!shape.success) throw new ConfigError(`settings file ${path} must hold a JSON object`);
  // "$comment" lets the shipped example explain itself without being a setting.
  const { $comment: _comment, ...settings } = shape.data;
  const unknown = Object.keys(settings).filter((key) => !settingKeys.includes(key as SettingName));
  if (unknown.length > 0) {
    throw new ConfigError(`settings file ${path} has unknown setting(s): ${unknown.join(', ')} (known: ${settingKeys.join(', ')})`);
  }
  return settings;
}
