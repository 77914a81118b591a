import { Command, InvalidArgumentError, Option } from 'commander';
import { createClient, normaliseBaseUrl } from '../client/http-client.js';
import { FatalError } from '../fatal-error.js';
import { DEFAULT_BASE_URL, DEFAULT_PROFILE, profilesPath, readProfiles, writeProfiles } from '../profiles.js';
import { browserOpener, ssoLogin } from '../sso-login.js';
import { examples } from './common.js';

interface LoginOptions {
  baseUrl: string;
  apiKey?: string;
  profile: string;
  json?: boolean;
  sso?: boolean;
  protocol?: 'oidc' | 'saml';
  workspace?: string;
  /** False with --no-browser. */
  browser: boolean;
  browserCommand?: string;
  timeout: number;
}

const say = (line: string) => void process.stderr.write(`${line}\n`);

function seconds(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 3600) throw new InvalidArgumentError('seconds from 1 to 3600');
  return n;
}

/**
 * `svcgw login`: checks the key against the server, then saves it as a profile (0600). With
 * `--sso`, signs in with the organisation's identity provider instead and saves the session.
 */
export function loginCommand(): Command {
  return examples(
    new Command('login')
      .summary('save a server URL and API key (or a single sign-on session) as a profile')
      .description(
        'check an API key against a server and save both as a profile in $XDG_CONFIG_HOME/svcgw/profiles.json (default ~/.config/svcgw/profiles.json, mode 0600); later commands use it. With --sso, sign in with the organisation’s identity provider in a browser instead (the answer comes back to a loopback port) and save the session',
      )
      .addOption(new Option('--base-url <url>', 'server URL').env('SVCGW_BASE_URL').default(DEFAULT_BASE_URL))
      .addOption(
        new Option('--api-key <key>', 'API key (prefer SVCGW_API_KEY: flags show in ps); required without --sso').env(
          'SVCGW_API_KEY',
        ),
      )
      .option('--profile <name>', 'name of the profile', DEFAULT_PROFILE)
      .option('--sso', 'sign in with the identity provider (OIDC or SAML) in a browser; saves a session, not a key')
      .addOption(
        new Option(
          '--protocol <protocol>',
          'with --sso: the identity provider to use (default: the one configured)',
        ).choices(['oidc', 'saml']),
      )
      .option('--workspace <id|slug>', 'with --sso: the workspace an organisation member’s session acts in')
      .option('--no-browser', 'with --sso: print the address to open instead of opening a browser')
      .addOption(
        new Option('--browser-command <command>', 'with --sso: the program that opens the address').env(
          'SVCGW_BROWSER',
        ),
      )
      .addOption(
        new Option('--timeout <seconds>', 'with --sso: how long to wait for the browser')
          .argParser(seconds)
          .default(300),
      )
      .option('--json', 'print the result as JSON')
      .action(async (opts: LoginOptions) => {
        const baseUrl = normaliseBaseUrl(opts.baseUrl);
        if (!/^[A-Za-z0-9_.-]{1,64}$/.test(opts.profile))
          throw new FatalError('--profile takes letters, digits, ., - and _', 2);
        let credential: string;
        let summary: Record<string, unknown> = {};
        if (opts.sso) {
          const signedIn = await ssoLogin({
            baseUrl,
            protocol: opts.protocol,
            workspace: opts.workspace,
            openBrowser: opts.browser ? browserOpener(opts.browserCommand, say) : null,
            timeoutMs: opts.timeout * 1000,
            say,
          });
          credential = signedIn.session_token;
          summary = {
            user: signedIn.user.email,
            role: signedIn.user.role,
            session_expires_at: signedIn.session.expires_at,
          };
        } else {
          if (!opts.apiKey) throw new FatalError('--api-key (or SVCGW_API_KEY) is required, or sign in with --sso', 2);
          // Any valid key may read the scope list: a refused key fails here, before anything is saved.
          await createClient({ baseUrl, apiKey: opts.apiKey }).get('/v1/api-keys/scopes');
          credential = opts.apiKey;
        }
        const path = profilesPath();
        const file = readProfiles(path);
        writeProfiles(path, {
          current: opts.profile,
          profiles: { ...file.profiles, [opts.profile]: { base_url: baseUrl, api_key: credential } },
        });
        process.stdout.write(
          opts.json
            ? `${JSON.stringify({ profile: opts.profile, base_url: baseUrl, path, ...summary })}\n`
            : opts.sso
              ? `Signed in to ${baseUrl} as ${String(summary.user)} (session until ${String(summary.session_expires_at)}), profile ${opts.profile}; saved in ${path}.\n`
              : `Logged in to ${baseUrl} as profile ${opts.profile}; saved in ${path}.\n`,
        );
      }),
    [
      'SVCGW_API_KEY=svc-… svcgw login --base-url https://gw.example.com',
      'svcgw login --base-url http://127.0.0.1:8787 --api-key "$KEY" --profile local',
      'svcgw login --sso --base-url https://gw.example.com',
      'svcgw login --sso --no-browser --workspace team-a',
    ],
  );
}

export function logoutCommand(): Command {
  return new Command('logout')
    .description('forget a saved profile; a single sign-on session in it is ended on the server first')
    .option('--profile <name>', 'the profile', DEFAULT_PROFILE)
    .action(async (opts: { profile: string }) => {
      const path = profilesPath();
      const file = readProfiles(path);
      const profile = file.profiles[opts.profile];
      if (!profile) throw new FatalError(`there is no profile named ${opts.profile} in ${path}`, 2);
      if (isSession(profile.api_key)) {
        try {
          await createClient({ baseUrl: profile.base_url, apiKey: profile.api_key }).post('/v1/sessions/logout');
          say(`Ended the session on ${profile.base_url}.`);
        } catch (error) {
          // An expired or revoked session has ended already; forgetting it locally is what is left.
          say(`The server did not end the session: ${(error as Error).message}`);
        }
      }
      const { [opts.profile]: _removed, ...rest } = file.profiles;
      writeProfiles(path, {
        ...(file.current && file.current !== opts.profile ? { current: file.current } : {}),
        profiles: rest,
      });
      process.stdout.write(`Removed profile ${opts.profile} from ${path}.\n`);
    });
}

/** Sessions (`svs-…`) are told from API keys by their prefix. */
const isSession = (credential: string) => credential.startsWith('svs-');
