import { userId as userIdOf } from './users.js';
import { Command, Option } from 'commander';
import type { Column } from '../output.js';
import { clientCommand, done, enc, examples, pagingOptions, printList, printOne, run, type Context } from './common.js';
import { confirmFirst, YES_HELP } from '../confirm.js';

interface Member {
  id: string;
  email?: string;
  first_name?: string | null;
  last_name?: string | null;
  role: string;
  org_role?: string;
}

const COLUMNS: Column<Member>[] = [
  { header: 'user id', value: (m) => m.id },
  { header: 'email', value: (m) => m.email },
  { header: 'name', value: (m) => [m.first_name, m.last_name].filter(Boolean).join(' ') || null },
  { header: 'role', value: (m) => m.role },
  { header: 'org role', value: (m) => m.org_role },
];

const ROLES = ['admin', 'manager', 'member'];
type Role = 'admin' | 'manager' | 'member';
/** `--workspace`, mandatory in every members command. */
type WorkspaceOption = { workspace: string };
const membersPath = (workspace: string) => `/v1/workspaces/${enc(workspace)}/members`;

export function membersCommand(): Command {
  const group = new Command('members').description(
    'members of a workspace and their roles: list, get, add, update, remove',
  );
  const workspace = () => new Option('--workspace <id|slug>', 'the workspace').makeOptionMandatory();
  const role = (fallback?: string) => {
    const option = new Option('--role <role>', 'role in the workspace').choices(ROLES);
    return fallback ? option.default(fallback) : option.makeOptionMandatory();
  };

  group.addCommand(
    examples(
      pagingOptions(clientCommand('list', 'list the members of a workspace'))
        .addOption(workspace())
        .addOption(new Option('--role <role>', 'only this role').choices(ROLES))
        .option('--email <email>', 'only this e-mail address')
        .action(
          run(async (ctx: Context<WorkspaceOption & { role?: Role; email?: string }>) =>
            printList<Member>(
              ctx,
              membersPath(ctx.opts.workspace),
              { role: ctx.opts.role, email: ctx.opts.email },
              COLUMNS,
            ),
          ),
        ),
      ['svcgw members list --workspace team-a'],
    ),
  );

  group.addCommand(
    examples(
      clientCommand('get', 'show one member')
        .argument('<user>', 'the user: id or email')
        .addOption(workspace())
        .action(
          run(async (ctx: Context<WorkspaceOption>, userId: string) =>
            printOne(ctx, `${membersPath(ctx.opts.workspace)}/${enc(await userIdOf(ctx, userId))}`),
          ),
        ),
      ['svcgw members get 3b1e… --workspace team-a'],
    ),
  );

  group.addCommand(
    examples(
      clientCommand('add', 'add a user of the organisation to a workspace')
        .addOption(workspace())
        .requiredOption('--user-id <id|email>', 'the user: id or email')
        .addOption(role('member'))
        .action(
          run(async (ctx: Context<WorkspaceOption & { userId: string; role: Role }>) =>
            done(
              ctx,
              await ctx.client.post(membersPath(ctx.opts.workspace), {
                users: [{ id: await userIdOf(ctx, ctx.opts.userId), role: ctx.opts.role }],
              }),
              `Added user ${ctx.opts.userId} to ${ctx.opts.workspace} as ${ctx.opts.role}.`,
            ),
          ),
        ),
      ['svcgw members add --workspace team-a --user-id 3b1e… --role manager'],
    ),
  );

  group.addCommand(
    examples(
      clientCommand('update', "change a member's role")
        .argument('<user>', 'the user: id or email')
        .addOption(workspace())
        .addOption(role())
        .action(
          run(async (ctx: Context<WorkspaceOption & { role: Role }>, userId: string) =>
            done(
              ctx,
              await ctx.client.put(`${membersPath(ctx.opts.workspace)}/${enc(await userIdOf(ctx, userId))}`, {
                role: ctx.opts.role,
              }),
              `User ${userId} is now ${ctx.opts.role} of ${ctx.opts.workspace}.`,
            ),
          ),
        ),
      ['svcgw members update 3b1e… --workspace team-a --role admin'],
    ),
  );

  group.addCommand(
    examples(
      clientCommand('remove', 'remove a member from a workspace')
        .option('--yes', YES_HELP)
        .hook('preAction', confirmFirst('remove from the workspace the user'))
        .argument('<user>', 'the user: id or email')
        .addOption(workspace())
        .action(
          run(async (ctx: Context<WorkspaceOption>, userId: string) =>
            done(
              ctx,
              await ctx.client.delete(`${membersPath(ctx.opts.workspace)}/${enc(await userIdOf(ctx, userId))}`),
              `Removed user ${userId} from ${ctx.opts.workspace}.`,
            ),
          ),
        ),
      ['svcgw members remove 3b1e… --workspace team-a'],
    ),
  );
  return group;
}
