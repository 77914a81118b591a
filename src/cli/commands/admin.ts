import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { FatalError } from '../fatal-error.js';
import { examples } from './common.js';
import { configFromFlags } from './settings-flags.js';

/**
 * `svcgw admin recover`: works on the data directory itself, not through the API, so that
 * whoever can read the database can always get back in, with or without a server running.
 */
export function adminCommand(): Command {
  const recover = new Command('recover')
    .description(
      'issue a new owner admin key straight into the database (no server or key needed; audited); for when no admin key is left',
    )
    .option('--data-dir <dir>', 'directory of the database (SVCGW_DATA_DIR; default ./data)')
    .option('--config <file>', 'JSON settings file (SVCGW_CONFIG), for the data directory and owner e-mail')
    .option('--json', 'print {"admin_api_key": …, "api_key_id": …, "user_id": …} as JSON')
    .action(async (flags: Record<string, unknown>) => {
      const config = await configFromFlags(flags);
      const { DATABASE_FILE } = await import('../../storage/database.js');
      if (!config.database_url && !existsSync(join(config.data_dir, DATABASE_FILE)))
        throw new FatalError(`no svcgw database in ${config.data_dir}; pass the server's --data-dir.`, 2);
      const [{ recoverOwnerKey, NotInitialisedError }, { systemClock }, { migrateToLatest, openDatabase }] =
        await Promise.all([
          import('../../bootstrap/recover.js'),
          import('../../lib/clock.js'),
          import('../../storage/database.js'),
        ]);
      const db = openDatabase(config);
      try {
        await migrateToLatest(db);
        const result = await recoverOwnerKey(db, {
          clock: systemClock,
          ownerEmail: config.bootstrap_owner_email,
        }).catch((error: unknown) => {
          if (error instanceof NotInitialisedError) throw new FatalError(error.message, 2);
          throw error;
        });
        // Straight to stdout, never through a logger: the key must appear in no log line.
        if (flags.json) {
          process.stdout.write(
            `${JSON.stringify({
              admin_api_key: result.adminApiKey,
              api_key_id: result.apiKeyId,
              user_id: result.userId,
              user_created: result.userCreated,
            })}\n`,
          );
        } else {
          process.stdout.write(
            `\nsvcgw: recovery. New owner admin API key (shown once, store it now):\n\n    ${result.adminApiKey}\n\n` +
              `It is key ${result.apiKeyId} of user ${result.userId}${result.userCreated ? ' (a new owner)' : ''}; ` +
              'the audit log records the recovery. A running server accepts it at once.\n\n',
          );
        }
      } finally {
        await db.destroy();
      }
    });
  examples(recover, [
    'svcgw admin recover --data-dir ./data',
    'KEY=$(svcgw admin recover --data-dir /var/lib/svcgw --json | jq -r .admin_api_key)',
  ]);
  return new Command('admin').description('work on the data directory directly, without a server').addCommand(recover);
}
