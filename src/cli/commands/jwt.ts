import { Command } from 'commander';
import { confirmFirst, YES_HELP } from '../confirm.js';
import { FatalError } from '../fatal-error.js';
import {
  clientCommand,
  defined,
  done,
  examples,
  integer,
  jsonValue,
  list,
  printOne,
  run,
  type Context,
} from './common.js';

interface JwtOptions {
  jwksUrl?: string;
  issuer?: string;
  audience?: string[];
  anyAudience?: boolean;
  algorithm?: string[];
  clockTolerance?: number;
  jwksCache?: number;
  requireKnownUser?: boolean;
  disabled?: boolean;
  claims?: Record<string, unknown>;
  data?: Record<string, unknown>;
}

/** The body of PUT /v1/settings/jwt: --data as the base, the flags over it. */
function settingsOf(o: JwtOptions): Record<string, unknown> {
  if (o.audience && o.anyAudience) throw new FatalError('give --audience or --any-audience, not both', 2);
  const body = {
    ...o.data,
    ...defined({
      jwks_url: o.jwksUrl,
      issuer: o.issuer,
      audience: o.anyAudience ? null : o.audience,
      algorithms: o.algorithm,
      clock_tolerance_seconds: o.clockTolerance,
      jwks_cache_seconds: o.jwksCache,
      require_known_user: o.requireKnownUser,
      enabled: o.disabled ? false : undefined,
      claims: o.claims,
    }),
  };
  const missing = ['jwks_url', 'issuer', 'audience'].filter((field) => !(field in body));
  if (missing.length > 0)
    throw new FatalError(
      `the settings need ${missing.join(', ')} (--jwks-url, --issuer, --audience or --any-audience, or --data)`,
      2,
    );
  return body;
}

/** `svcgw jwt`: the organisation's JWT authentication (docs/jwt.md), over /v1/settings/jwt. */
export function jwtCommand(): Command {
  const group = new Command('jwt').description(
    'JWT authentication: requests may carry a token from your identity provider (get, set, delete)',
  );
  group.addCommand(
    examples(
      clientCommand('get', 'show the JWT settings (exit 1 while JWT authentication is not set up)').action(
        run(async (ctx) => printOne(ctx, '/v1/settings/jwt')),
      ),
      ['svcgw jwt get --json'],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('set', 'replace the JWT settings; what is not given takes its default')
        .option('--jwks-url <url>', 'where the identity provider publishes its keys (jwks_uri)')
        .option('--issuer <iss>', 'the exact iss accepted')
        .option('--audience <aud>', 'an accepted aud; comma-separated or repeated', list)
        .option('--any-audience', 'skip the audience check (not recommended)')
        .option(
          '--algorithm <alg>',
          'an accepted signature algorithm (RS256, ES256, EdDSA, …); repeat for several',
          list,
        )
        .option('--clock-tolerance <seconds>', 'slack on exp and nbf (0 to 300)', integer(0, 300))
        .option('--jwks-cache <seconds>', 'how long fetched keys are used (60 to 86400)', integer(60, 86400))
        .option('--require-known-user', 'refuse tokens whose user is no svcgw user')
        .option('--disabled', 'keep the settings but refuse every JWT')
        .option('--claims <json>', 'which claims carry what, e.g. {"workspace": ["ws"]}', jsonValue)
        .option('--data <json>', 'the whole settings object as JSON (flags override its fields)', jsonValue)
        .action(
          run(async (ctx: Context<JwtOptions>) => {
            const body = await ctx.client.put<Record<string, unknown>>('/v1/settings/jwt', settingsOf(ctx.opts));
            ctx.out.result(body, () => `JWT authentication set up for issuer ${String(body.issuer)}.`);
          }),
        ),
      [
        'svcgw jwt set --jwks-url https://idp.example.com/.well-known/jwks.json --issuer https://idp.example.com/ --audience svcgw',
      ],
    ),
  );
  group.addCommand(
    examples(
      clientCommand('delete', 'turn JWT authentication off (the settings are removed)')
        .option('--yes', YES_HELP)
        .hook('preAction', confirmFirst('turn JWT authentication off'))
        .action(
          run(async (ctx) => done(ctx, await ctx.client.delete('/v1/settings/jwt'), 'JWT authentication is off.')),
        ),
      ['svcgw jwt delete --yes'],
    ),
  );
  return group;
}
