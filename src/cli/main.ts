import { CommanderError, type Command } from 'commander';
import { FatalError } from './fatal-error.js';
import { endQuietlyWhenPipeCloses } from './output.js';

/**
 * The program argv needs. `svcgw serve` (its help and errors too) needs only its own command: a
 * long-running server then never loads the admin commands' modules (issue #19: about 1 MB of
 * heap). Anything else, `svcgw --help` and `svcgw help serve` included, gets every command.
 */
async function programFor(argv: string[]): Promise<Command> {
  if (argv[2] === 'serve') {
    const [{ assembleProgram }, { serveCommand }] = await Promise.all([
      import('./assemble-program.js'),
      import('./commands/serve.js'),
    ]);
    return assembleProgram([serveCommand()]);
  }
  return (await import('./program.js')).buildProgram();
}

/** Entry point: exit 0 on success, 1 on a runtime or server error, 2 on a usage error. */
export async function main(argv: string[]): Promise<void> {
  endQuietlyWhenPipeCloses(process.stdout);
  endQuietlyWhenPipeCloses(process.stderr);
  try {
    await (await programFor(argv)).parseAsync(argv);
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
