import { Command } from 'commander';
import { addSettingsFlags, configFromFlags } from './settings-flags.js';

/**
 * Prints the bootstrap admin key once, straight to a terminal stream and never through the logger, so
 * that it appears in no log line.
 */
export function printBootstrapBanner(
  adminApiKey: string | null,
  fromSettings: boolean,
  out: NodeJS.WritableStream = process.stdout,
): void {
  if (fromSettings || adminApiKey === null) {
    out.write('\nsvcgw: first start. The owner admin API key is the value of SVCGW_BOOTSTRAP_ADMIN_KEY.\n\n');
    return;
  }
  out.write(
    `\nsvcgw: first start. Owner admin API key (shown once, store it now):\n\n    ${adminApiKey}\n\n` +
      'Send it as the x-service-api-key header.\n\n',
  );
}

export function initCommand(): Command {
  return addSettingsFlags(new Command('init'))
    .description(
      'create the database, organisation, default workspace, owner user and owner admin key, without serving',
    )
    .option('--json', 'print {"admin_api_key": …} as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  svcgw init --data-dir ./data\n  KEY=$(svcgw init --json | jq -r .admin_api_key)',
    )
    .action(async (flags: Record<string, unknown>) => {
      const config = await configFromFlags(flags);
      const [{ bootstrap }, { systemClock }, { migrateToLatest, openDatabase }] = await Promise.all([
        import('../../bootstrap/bootstrap.js'),
        import('../../lib/clock.js'),
        import('../../storage/database.js'),
      ]);
      const db = openDatabase(config);
      try {
        await migrateToLatest(db);
        const result = await bootstrap(db, {
          clock: systemClock,
          ownerEmail: config.bootstrap_owner_email,
          adminKey: config.bootstrap_admin_key,
        });
        if (flags.json) {
          process.stdout.write(
            `${JSON.stringify({ admin_api_key: result.adminApiKey, already_initialised: !result.created })}\n`,
          );
        } else if (result.created) {
          printBootstrapBanner(result.adminApiKey, result.keyFromSettings);
        } else {
          process.stdout.write(
            `svcgw: ${config.data_dir} is already initialised; the admin key was shown on its first start.\n`,
          );
        }
      } finally {
        await db.destroy();
      }
    });
}
