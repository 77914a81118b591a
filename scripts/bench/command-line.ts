import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * `parseArgs` for the bench scripts: an unknown option or a value it refuses (a value that starts
 * with a dash needs `--name=value`) ends the script with parseArgs' own sentence and the usage,
 * exit code 2, rather than a stack trace.
 */
export function parseCommandLine<T extends ParseArgsConfig>(
  script: string,
  usage: string,
  config: T,
): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS_')) throw error;
    process.stderr.write(`${script}: ${(error as Error).message}\n${usage}\n`);
    process.exit(2);
  }
}

/**
 * `--setting name=value` items as the gateway's environment (`SVCGW_NAME=value`); `refuse` is
 * called with a sentence for an item that is not `name=value` with a setting's spelling.
 */
export function settingsEnv(items: readonly string[], refuse: (problem: string) => never): Record<string, string> {
  const env: Record<string, string> = {};
  for (const item of items) {
    const match = /^([a-z][a-z0-9_]*)=(.*)$/.exec(item);
    if (!match) refuse(`--setting takes name=value with a setting's name (e.g. sqlite_cache_mb=16), not '${item}'`);
    env[`SVCGW_${match[1]!.toUpperCase()}`] = match[2]!;
  }
  return env;
}
