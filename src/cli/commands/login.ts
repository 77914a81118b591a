import { Command, Option } from 'commander';
import { createClient, normaliseBaseUrl } from '../client/http-client.js';
import { FatalError } from '../fatal-error.js';
import { DEFAULT_BASE_URL, DEFAULT_PROFILE, profilesPath, readProfiles, writeProfiles } from '../profiles.js';
import { examples } from './common.js';

/** `svcgw login`: checks the key against the server, then saves it as a profile (0600). */
export function loginCommand(): Command {
  return examples(
    new Command('login')
      .summary('save a server URL and API key as a profile')
      .description(
        'check an API key against a server and save both as a profile in $XDG_CONFIG_HOME/svcgw/profiles.json (default ~/.config/svcgw/profiles.json, mode 0600); later commands use it',
      )
      .addOption(new Option('--base-url <url>', 'server URL').env('SVCGW_BASE_URL').default(DEFAULT_BASE_URL))
      .addOption(
        new Option('--api-key <key>', 'API key (prefer SVCGW_API_KEY: flags show in ps)')
          .env('SVCGW_API_KEY')
          .makeOptionMandatory(),
      )
      .option('--profile <name>', 'name of the profile', DEFAULT_PROFILE)
      .option('--json', 'print the result as JSON')
      .action(async (opts: { baseUrl: string; apiKey: string; profile: string; json?: boolean }) => {
        const baseUrl = normaliseBaseUrl(opts.baseUrl);
        if (!/^[A-Za-z0-9_.-]{1,64}$/.test(opts.profile))
          throw new FatalError('--profile takes letters, digits, ., - and _', 2);
        // Any valid key may read the scope list: a refused key fails here, before anything is saved.
        await createClient({ baseUrl, apiKey: opts.apiKey }).get('/v1/api-keys/scopes');
        const path = profilesPath();
        const file = readProfiles(path);
        writeProfiles(path, {
          current: opts.profile,
          profiles: { ...file.profiles, [opts.profile]: { base_url: baseUrl, api_key: opts.apiKey } },
        });
        process.stdout.write(
          opts.json
            ? `${JSON.stringify({ profile: opts.profile, base_url: baseUrl, path })}\n`
            : `Logged in to ${baseUrl} as profile ${opts.profile}; saved in ${path}.\n`,
        );
      }),
    [
      'SVCGW_API_KEY=svc-… svcgw login --base-url https://gw.example.com',
      'svcgw login --base-url http://127.0.0.1:8787 --api-key "$KEY" --profile local',
    ],
  );
}

export function logoutCommand(): Command {
  return new Command('logout')
    .description('forget a saved profile')
    .option('--profile <name>', 'the profile', DEFAULT_PROFILE)
    .action((opts: { profile: string }) => {
      const path = profilesPath();
      const file = readProfiles(path);
      if (!file.profiles[opts.profile]) throw new FatalError(`there is no profile named ${opts.profile} in ${path}`, 2);
      const { [opts.profile]: _removed, ...rest } = file.profiles;
      writeProfiles(path, {
        ...(file.current && file.current !== opts.profile ? { current: file.current } : {}),
        profiles: rest,
      });
      process.stdout.write(`Removed profile ${opts.profile} from ${path}.\n`);
    });
}
