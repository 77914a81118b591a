import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { FatalError } from './fatal-error.js';

/** The help line of `--yes`, the same on every destructive command. */
export const YES_HELP = 'do it without asking (needed when stdin is not a terminal)';

/**
 * A `preAction` hook for a destructive command: on a terminal it asks "Are you sure? [y/N]"
 * (anything but y/yes stops it, changing nothing); in a script, where nobody can answer, it
 * demands `--yes` (exit 2) rather than guess. `what` says what would happen, e.g. "revoke API key".
 */
export function confirmFirst(what: string) {
  return async (_group: Command, command: Command): Promise<void> => {
    if (command.opts<{ yes?: boolean }>().yes === true) return;
    const target = command.args.length > 0 ? `${what} ${command.args.join(' ')}` : what;
    if (process.stdin.isTTY !== true)
      throw new FatalError(
        `this would ${target}; pass --yes to confirm (stdin is not a terminal, so nobody can be asked).`,
        2,
      );
    const prompt = createInterface({ input: process.stdin, output: process.stderr });
    try {
      const answer = await prompt.question(`This will ${target}. Are you sure? [y/N] `);
      if (!/^y(es)?$/i.test(answer.trim())) throw new FatalError('not confirmed; nothing was changed.', 1);
    } finally {
      prompt.close();
    }
  };
}
