import { Command } from 'commander';
import { confirmFirst, YES_HELP } from '../confirm.js';
import type { Column } from '../output.js';
import { clientCommand, done, enc, examples, pagingOptions, printList, run, type Context } from './common.js';

interface ScimToken {
  id: string;
  name: string;
  token_hint: string;
  status: string;
  expires_at: string | null;
  created_at: string;
}

const COLUMNS: Column<ScimToken>[] = [
  { header: 'id', value: (t) => t.id },
  { header: 'name', value: (t) => t.name },
  { header: 'hint', value: (t) => t.token_hint },
  { header: 'status', value: (t) => t.status, colour: (t) => (t.status === 'active' ? 'green' : 'gray') },
  { header: 'expires', value: (t) => t.expires_at ?? 'never' },
  { header: 'created', value: (t) => t.created_at },
];

function tokensCommand(): Command {
  const group = new Command('tokens').description(
    'the tokens identity providers use to call the SCIM API: list, create, revoke',
  );
  group.addCommand(
    examples(
      pagingOptions(clientCommand('list', 'list SCIM tokens (never the tokens themselves)')).action(
        run(async (ctx) => printList(ctx, '/v1/scim/tokens', {}, COLUMNS)),
      ),
      ['svcgw scim tokens list'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('create', 'create a SCIM token; it is shown this once (only its hash is stored)')
        .requiredOption('--name <name>', 'what it is for (the identity provider it is given to)')
        .option('--expires-at <time>', 'when it stops working (ISO 8601 with an offset); never when left out')
        .action(
          run(async (ctx: Context<{ name: string; expiresAt?: string }>) => {
            const created = await ctx.client.post<ScimToken & { token: string }>('/v1/scim/tokens', {
              name: ctx.opts.name,
              ...(ctx.opts.expiresAt ? { expires_at: ctx.opts.expiresAt } : {}),
            });
            ctx.out.result(
              created,
              () =>
                `Created SCIM token ${created.name} (${created.id}). Store it now; it is not shown again:\n${created.token}`,
            );
          }),
        ),
      ['svcgw scim tokens create --name Okta --json | jq -r .token'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('revoke', 'revoke a SCIM token at once')
        .argument('<token-id>', 'the id of the token (svcgw scim tokens list)')
        .option('--yes', YES_HELP)
        .hook('preAction', confirmFirst('revoke SCIM token'))
        .action(
          run(async (ctx, id: string) =>
            done(ctx, await ctx.client.delete(`/v1/scim/tokens/${enc(id)}`), `Revoked SCIM token ${id}.`),
          ),
        ),
      ['svcgw scim tokens revoke 1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b --yes'],
    ),
  );
  return group;
}

/** `svcgw scim`: provisioning from an identity provider (docs/scim.md). */
export function scimCommand(): Command {
  return new Command('scim').description('SCIM provisioning from an identity provider').addCommand(tokensCommand());
}
