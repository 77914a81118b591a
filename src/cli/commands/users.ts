import { idByName } from './by-name.js';
import { Command, Option } from 'commander';
import type { Column } from '../output.js';
import { clientCommand, done, enc, examples, pagingOptions, printList, printOne, run, type Context } from './common.js';
import { confirmFirst, YES_HELP } from '../confirm.js';

interface User {
  id: string;
  email: string;
  first_name?: string | null;
  last_name?: string | null;
  role: string;
  created_at?: string;
}

const COLUMNS: Column<User>[] = [
  { header: 'id', value: (u) => u.id },
  { header: 'email', value: (u) => u.email },
  { header: 'name', value: (u) => [u.first_name, u.last_name].filter(Boolean).join(' ') || null },
  { header: 'role', value: (u) => u.role },
  { header: 'created', value: (u) => u.created_at },
];

export function usersCommand(): Command {
  const group = new Command('users').description(
    'users of the organisation: list, get, update, delete (users join through invites)',
  );

  group.addCommand(
    examples(
      pagingOptions(clientCommand('list', 'list users'))
        .addOption(new Option('--role <role>', 'only this organisation role').choices(['owner', 'admin', 'member']))
        .option('--email <email>', 'only this e-mail address')
        .action(
          run(async (ctx: Context<{ role?: 'owner' | 'admin' | 'member'; email?: string }>) =>
            printList<User>(ctx, '/v1/users', { role: ctx.opts.role, email: ctx.opts.email }, COLUMNS),
          ),
        ),
      ['svcgw users list', 'svcgw users list --role admin --json'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('get', 'show a user')
        .argument('<id|email>', 'user id or email')
        .action(run(async (ctx, ref: string) => printOne(ctx, `/v1/users/${enc(await userId(ctx, ref))}`))),
      ['svcgw users get ana@example.com'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('update', "change a user's organisation role")
        .argument('<id|email>', 'user id or email')
        .addOption(new Option('--role <role>', 'organisation role').choices(['admin', 'member']).makeOptionMandatory())
        .action(
          run(async (ctx: Context<{ role: 'admin' | 'member' }>, ref: string) =>
            done(
              ctx,
              await ctx.client.put(`/v1/users/${enc(await userId(ctx, ref))}`, { role: ctx.opts.role }),
              `User ${ref} is now ${ctx.opts.role}.`,
            ),
          ),
        ),
      ['svcgw users update 3b1e… --role admin'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('delete', 'remove a user from the organisation')
        .option('--yes', YES_HELP)
        .hook('preAction', confirmFirst('remove from the organisation the user'))
        .argument('<id|email>', 'user id or email')
        .action(
          run(async (ctx, ref: string) =>
            done(ctx, await ctx.client.delete(`/v1/users/${enc(await userId(ctx, ref))}`), `Deleted user ${ref}.`),
          ),
        ),
      ['svcgw users delete 3b1e…'],
    ),
  );
  return group;
}

/** A user id, or the id of the one user with this email. */
export const userId = (ctx: Context, ref: string): Promise<string> =>
  idByName(ctx, '/v1/users', ref, 'user', { field: 'email' });
