import { Command } from 'commander';
import { VERSION } from '../lib/version.js';
import { groupExamples } from './commands/common.js';

/** Every command, however deep, reports usage errors by throwing (exit 2) instead of exiting. */
function configureTree(command: Command, root = true): void {
  command.exitOverride().showHelpAfterError('(add --help for usage)');
  for (const sub of command.commands) configureTree(sub, false);
  if (!root && command.commands.length > 0) groupExamples(command);
}

/** The `svcgw` program with these commands under it (all of them, or only the one argv names). */
export function assembleProgram(commands: Command[]): Command {
  const program = new Command('svcgw')
    .description('Self-hosted AI gateway: serve it, and administer it.')
    .version(VERSION, '-V, --version')
    .addHelpText(
      'after',
      "\nThe admin commands connect with --base-url / SVCGW_BASE_URL and --api-key / SVCGW_API_KEY,\nor a profile saved by svcgw login. --json prints JSON for scripts. Exit codes: 0 success,\n1 server or network error (the server's message on stderr), 2 usage error.",
    );
  for (const command of commands) program.addCommand(command);
  configureTree(program);
  return program;
}
