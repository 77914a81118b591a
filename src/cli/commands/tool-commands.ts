import type { Command } from 'commander';
import { confirmFirst, YES_HELP } from '../confirm.js';
import { clientCommand, done, enc, examples, printOne, run } from './common.js';

/** An MCP or agent integration or server, as the commands that act on one name it. */
export interface ToolResource {
  /** The collection path, such as `/v1/mcp-servers`. */
  path: string;
  /** How messages name it, such as `MCP server`. */
  noun: string;
  argument: '<integration>' | '<server>';
}

/** `delete <ref> --yes`: archives the integration or server (after a confirmation). */
export function archiveCommand(resource: ToolResource, description: string, example: string): Command {
  return examples(
    clientCommand('delete', description)
      .option('--yes', YES_HELP)
      .hook('preAction', confirmFirst(`delete ${resource.noun}`))
      .argument(resource.argument, 'slug or id')
      .action(
        run(async (ctx, ref: string) =>
          done(ctx, await ctx.client.delete(`${resource.path}/${enc(ref)}`), `Deleted ${resource.noun} ${ref}.`),
        ),
      ),
    [example],
  );
}

/** `metadata <ref>`: what the last sync learnt of the upstream server or agent. */
export function metadataCommand(resource: ToolResource, description: string, example: string): Command {
  return examples(
    clientCommand('metadata', description)
      .argument(resource.argument, 'slug or id')
      .action(run(async (ctx, ref: string) => printOne(ctx, `${resource.path}/${enc(ref)}/metadata`))),
    [example],
  );
}

/** Switches as the API takes them: those turned on, then those turned off, each named under `key`. */
export function onOff<K extends string>(
  key: K,
  on: readonly string[] = [],
  off: readonly string[] = [],
): Array<Record<K, string> & { enabled: boolean }> {
  const entry = (name: string, enabled: boolean) =>
    ({ [key]: name, enabled }) as Record<K, string> & { enabled: boolean };
  return [...on.map((name) => entry(name, true)), ...off.map((name) => entry(name, false))];
}

/** The body of `PUT …/workspaces`: per-workspace switches, the global one when given, and whether to clear the others first. */
export function workspaceAccessBody(change: {
  on?: readonly string[] | undefined;
  off?: readonly string[] | undefined;
  global?: boolean | undefined;
  replace?: boolean | undefined;
}) {
  return {
    workspaces: onOff('id', change.on, change.off),
    ...(change.global !== undefined ? { global_workspace_access: { enabled: change.global } } : {}),
    override_existing_workspace_access: change.replace === true,
  };
}
