import { Command, CommanderError } from 'commander';
import { VERSION } from '../lib/version.js';
import { initCommand } from './commands/init.js';
import { serveCommand } from './commands/serve.js';
import { FatalError } from './fatal-error.js';

export function buildProgram(): Command {
  const program = new Command('svcgw')
    .description('Self-hosted AI gateway: serve it, and administer it.')
    .version(VERSION, '-V, --version')
    .showHelpAfterError()
    .exitOverride();
  program.addCommand(serveCommand());
  program.addCommand(initCommand());
  for (const command of program.commands) command.exitOverride();
  return program;
}

/** Entry point: exit 0 on success, 1 on a runtime or server error, 2 on a usage error. */
export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode === 0 ? 0 : 2;
      return;
    }
    if (error instanceof FatalError) {
      process.stderr.write(`svcgw: ${error.message}\n`);
      process.exitCode = error.exitCode;
      return;
    }
    process.stderr.write(`svcgw: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  }
}
