import { Command, InvalidArgumentError, Option } from 'commander';
import type { Column } from '../output.js';
import {
  clientCommand,
  defined,
  done,
  enc,
  examples,
  integer,
  pagingOptions,
  printList,
  printOne,
  run,
  type Context,
} from './common.js';
import { confirmFirst, YES_HELP } from '../confirm.js';

interface Invite {
  id: string;
  email: string;
  role: string;
  status: string;
  expires_at?: string | null;
  workspaces?: { workspace_id: string; role: string }[];
}

const COLUMNS: Column<Invite>[] = [
  { header: 'id', value: (i) => i.id },
  { header: 'email', value: (i) => i.email },
  { header: 'role', value: (i) => i.role },
  {
    header: 'status',
    value: (i) => i.status,
    colour: (i) => (i.status === 'pending' ? 'yellow' : i.status === 'accepted' ? 'green' : 'gray'),
  },
  { header: 'workspaces', value: (i) => i.workspaces?.map((w) => `${w.workspace_id}:${w.role}`) },
  { header: 'expires', value: (i) => i.expires_at },
];

interface WorkspaceRole {
  id: string;
  role: string;
}

/** `team-a` or `team-a:manager`, repeated → `[{id, role}]`. */
function workspaceRole(value: string, previous: WorkspaceRole[] = []): WorkspaceRole[] {
  const [id, role = 'member'] = value.split(':');
  if (!id || !['admin', 'manager', 'member'].includes(role))
    throw new InvalidArgumentError('expected <workspace>[:admin|manager|member].');
  return [...previous, { id, role }];
}

export function invitesCommand(): Command {
  const group = new Command('invites').description(
    'invitations to join the organisation: create, list, get, delete, resend',
  );

  group.addCommand(
    examples(
      clientCommand('create', 'invite someone by e-mail; prints the invite link (it carries a one-time token)')
        .requiredOption('--email <email>', 'who to invite')
        .addOption(new Option('--role <role>', 'organisation role').choices(['admin', 'member']).default('member'))
        .option(
          '--workspace <workspace[:role]>',
          'a workspace to join, with its role (default member); repeat for several',
          workspaceRole,
        )
        .option('--expires-in-days <n>', 'days until the invite expires (1 to 30, default 7)', integer(1, 30))
        .action(
          run(
            async (
              ctx: Context<{
                email: string;
                role: 'admin' | 'member';
                workspace?: WorkspaceRole[];
                expiresInDays?: number;
              }>,
            ) => {
              const o = ctx.opts;
              const body = {
                email: o.email,
                role: o.role,
                ...defined({ workspaces: o.workspace, expires_in_days: o.expiresInDays }),
              };
              const created = await ctx.client.post<{ id: string; invite_link?: string }>('/v1/invites', body);
              ctx.out.result(
                created,
                () =>
                  `Invited ${o.email} (${created.id}).${created.invite_link ? `\nInvite link (shown once): ${created.invite_link}` : ''}`,
              );
            },
          ),
        ),
      ['svcgw invites create --email ana@example.com --workspace team-a:manager'],
    ),
  );
  group.addCommand(
    examples(
      pagingOptions(clientCommand('list', 'list invitations'))
        .addOption(
          new Option('--status <status>', 'only this status').choices(['pending', 'accepted', 'cancelled', 'expired']),
        )
        .option('--email <email>', 'only this e-mail address')
        .addOption(new Option('--role <role>', 'only this organisation role').choices(['admin', 'member']))
        .action(
          run(
            async (
              ctx: Context<{
                status?: 'pending' | 'accepted' | 'cancelled' | 'expired';
                email?: string;
                role?: 'admin' | 'member';
              }>,
            ) =>
              printList<Invite>(
                ctx,
                '/v1/invites',
                { status: ctx.opts.status, email: ctx.opts.email, role: ctx.opts.role },
                COLUMNS,
              ),
          ),
        ),
      ['svcgw invites list --status pending'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('get', 'show an invitation')
        .argument('<id>', 'invite id')
        .action(run(async (ctx, id: string) => printOne(ctx, `/v1/invites/${enc(id)}`))),
      ['svcgw invites get 5d2a…'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('delete', 'revoke an invitation')
        .option('--yes', YES_HELP)
        .hook('preAction', confirmFirst('revoke invite'))
        .argument('<id>', 'invite id')
        .action(
          run(async (ctx, id: string) =>
            done(ctx, await ctx.client.delete(`/v1/invites/${enc(id)}`), `Revoked invite ${id}.`),
          ),
        ),
      ['svcgw invites delete 5d2a…'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('resend', 'send an invitation e-mail again, with a new link')
        .argument('<id>', 'invite id')
        .option('--expires-in-days <n>', 'days until the new link expires (1 to 30)', integer(1, 30))
        .action(
          run(async (ctx: Context<{ expiresInDays?: number }>, id: string) => {
            const body = await ctx.client.post<{ invite_link?: string; inviteLink?: string }>(
              `/v1/invites/${enc(id)}/resend`,
              defined({ expires_in_days: ctx.opts.expiresInDays }),
            );
            const link = body?.invite_link ?? body?.inviteLink;
            done(ctx, body, `Resent invite ${id}.${link ? `\nInvite link: ${link}` : ''}`);
          }),
        ),
      ['svcgw invites resend 5d2a…'],
    ),
  );
  return group;
}
