import { Command, Option } from 'commander';
import type { Column } from '../output.js';
import { clientCommand, done, enc, examples, pagingOptions, printList, printOne, run, type Context } from './common.js';
import { userId } from './users.js';

interface Session {
  id: string;
  user_id: string;
  identity_provider: string;
  status: string;
  client?: string | null;
  created_at: string;
  expires_at: string;
  last_used_at?: string | null;
}

const COLUMNS: Column<Session>[] = [
  { header: 'id', value: (s) => s.id },
  { header: 'user', value: (s) => s.user_id },
  { header: 'via', value: (s) => s.identity_provider },
  { header: 'status', value: (s) => s.status },
  { header: 'created', value: (s) => s.created_at },
  { header: 'expires', value: (s) => s.expires_at },
  { header: 'last used', value: (s) => s.last_used_at },
];

/** `svcgw sessions`: single sign-on sessions, for organisation owners and admins. */
export function sessionsCommand(): Command {
  const group = new Command('sessions').description(
    'single sign-on sessions (svcgw login --sso): list, get, revoke; owners and admins',
  );
  group.addCommand(
    examples(
      pagingOptions(clientCommand('list', 'list sessions, newest first'))
        .option('--user <id|email>', 'only the sessions of this user')
        .addOption(
          new Option('--status <status>', 'only sessions in this state').choices(['active', 'expired', 'revoked']),
        )
        .action(
          run(async (ctx: Context<{ user?: string; status?: string }>) => {
            const user = ctx.opts.user === undefined ? undefined : await userId(ctx, ctx.opts.user);
            await printList<Session>(ctx, '/v1/sessions', { user_id: user, status: ctx.opts.status }, COLUMNS);
          }),
        ),
      ['svcgw sessions list --status active', 'svcgw sessions list --user ana@example.com --json'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('get', 'show a session')
        .argument('<id>', 'session id')
        .action(run(async (ctx, id: string) => printOne(ctx, `/v1/sessions/${enc(id)}`))),
      ['svcgw sessions get 0b6f…'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('revoke', 'end a session at once (its user signs in again)')
        .argument('<id>', 'session id')
        .action(
          run(async (ctx, id: string) =>
            done(ctx, await ctx.client.delete(`/v1/sessions/${enc(id)}`), `Revoked session ${id}.`),
          ),
        ),
      ['svcgw sessions revoke 0b6f…'],
    ),
  );
  return group;
}
