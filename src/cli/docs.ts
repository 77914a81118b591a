import type { Command } from 'commander';
import { buildProgram } from './program.js';

// eslint-disable-next-line no-control-regex -- ESC starts the colour codes that this strips from the help
const ANSI = /\x1b\[[0-9;]*m/g;

function walk(command: Command, path: string[] = []): { path: string[]; command: Command }[] {
  const here = [...path, command.name()];
  return [
    { path: here, command },
    ...command.commands.filter((c) => c.name() !== 'help').flatMap((c) => walk(c, here)),
  ];
}

/**
 * docs/cli.md, made from the commands' own help so that it cannot drift from them:
 * `npm run docs:cli` writes it and a unit test checks that it is current.
 */
export function generateCliDocs(): string {
  const program = buildProgram();
  const entries = walk(program);
  let captured = '';
  for (const { command } of entries) {
    command
      .configureHelp({ helpWidth: 100 })
      .configureOutput({ getOutHasColors: () => false, writeOut: (text) => void (captured += text) });
  }
  const anchor = (path: string[]) => path.join('-');
  const sections = entries.map(({ path, command }) => {
    captured = '';
    command.outputHelp(); // unlike helpInformation(), includes the examples added after it
    const help = captured.replace(ANSI, '').trimEnd();
    return [`## ${path.join(' ')}`, '', '```text', help, '```', ''].join('\n');
  });
  return [
    '# svcgw command line',
    '',
    "Generated from the commands' `--help` by `npm run docs:cli`; do not edit. The same `svcgw` that",
    'serves is the client that administrators and CI scripts use against a running server.',
    '',
    '- **Connection.** `--base-url` / `SVCGW_BASE_URL` and `--api-key` / `SVCGW_API_KEY`, or a profile',
    '  saved by `svcgw login` in `$XDG_CONFIG_HOME/svcgw/profiles.json` (default',
    "  `~/.config/svcgw/profiles.json`, mode 0600). A saved key is only sent to its own profile's server.",
    '- **Output.** Tables for people; `--json` prints one JSON document (`logs tail`: one JSON line per',
    '  request) for scripts. Long listings (`--all`) and applies show progress on a terminal, on stderr.',
    "- **Exit codes.** 0 success; 1 a server or network error, with the server's message on stderr;",
    '  2 a usage error (unknown option, missing argument, bad value, invalid apply file).',
    '- **`logs tail`** follows `GET /v1/logs/stream` (server-sent events) of the instance it is connected',
    '  to: records of requests served by other instances behind the same load balancer do not appear.',
    '',
    '## Commands',
    '',
    ...entries
      .slice(1)
      .map(
        ({ path, command }) =>
          `- [\`${path.join(' ')}\`](#${anchor(path)}): ${command.summary() || command.description().split('\n')[0]}`,
      ),
    '',
    ...sections,
  ].join('\n');
}
