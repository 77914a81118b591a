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
