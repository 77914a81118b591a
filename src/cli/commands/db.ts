import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { FatalError } from '../fatal-error.js';
import { examples } from './common.js';
import { configFromFlags } from './settings-flags.js';

interface MigrateFlags {
  from: string;
  to: string;
  force?: boolean;
  batchSize?: number;
  config?: string;
  json?: boolean;
}

const positive = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of at least 1');
  return n;
};

/** `svcgw db`: works on databases directly, without a server. */
export function dbCommand(): Command {
  const migrate = new Command('migrate-to-postgres')
    .description(
      'copy a SQLite installation (control plane, audit, request logs, rollups) into a PostgreSQL database, verified by row counts; stop the server first',
    )
    .requiredOption('--from <dir>', 'data directory of the SQLite installation (holds svcgw.sqlite and master.key)')
    .requiredOption('--to <url>', 'postgres://user:password@host:5432/database; svcgw creates its tables there')
    .option(
      '--force',
      'when the target already holds svcgw data, empty its svcgw tables first (in the same transaction) instead of refusing',
    )
    .option('--batch-size <rows>', 'rows per INSERT (default 1000)', positive)
    .option('--config <file>', 'JSON settings file (SVCGW_CONFIG), for master_key')
    .option('--json', 'print the row counts and the master key check as JSON')
    .addHelpText(
      'after',
      '\nThe copied provider credentials stay encrypted with the master key of the SQLite installation\n' +
        '(SVCGW_MASTER_KEY, or <dir>/master.key): the command checks that this key decrypts them, and every\n' +
        'instance on PostgreSQL must be started with SVCGW_MASTER_KEY set to it. Exit codes: 0 copied and\n' +
        'every count matches; 1 refused or a count differs (nothing copied); 2 usage error.',
    )
    .action((flags: MigrateFlags) => migrateToPostgres(flags));
  examples(migrate, [
    'svcgw db migrate-to-postgres --from ./data --to postgres://svcgw@db.internal:5432/svcgw',
    'SVCGW_MASTER_KEY=$(cat ./data/master.key) svcgw db migrate-to-postgres --from ./data --to "$URL" --force --json',
  ]);
  return new Command('db').description('work on databases directly, without a server').addCommand(migrate);
}

async function migrateToPostgres(flags: MigrateFlags): Promise<void> {
  if (!/^postgres(ql)?:\/\//.test(flags.to))
    throw new FatalError('--to must be a postgres:// (or postgresql://) URL', 2);
  const from = resolve(flags.from);
  const [database, copy, secretBox, { redactUrlPassword }] = await Promise.all([
    import('../../storage/database.js'),
    import('../../storage/postgres/copy-from-sqlite.js'),
    import('../../lib/secret-box.js'),
    import('../../lib/redact.js'),
  ]);
  if (!existsSync(join(from, database.DATABASE_FILE)))
    throw new FatalError(
      `no svcgw database in ${from} (expected ${database.DATABASE_FILE}); pass the server's data directory`,
      2,
    );
  const config = await configFromFlags({ dataDir: from, config: flags.config });
  const refused = (error: unknown): never => {
    if (error instanceof database.StorageRefusedError || error instanceof copy.CopyRefusedError)
      throw new FatalError(error.message, 1);
    if (error instanceof secretBox.SecretBoxError)
      throw new FatalError(`${error.message} Nothing was copied: no instance could use these credentials.`, 1);
    throw error;
  };

  // The source first reaches this version's schema (as `svcgw serve` would on start), so both sides match.
  const sourceDb = database.openSqlite(from);
  await database.migrateToLatest(sourceDb).catch(refuse(sourceDb, refused));
  await sourceDb.destroy();

  const source = copy.openCopySource(from);
  const target = database.openPostgres(flags.to, () => undefined);
  try {
    const masterKey = checkMasterKey(copy.sealedValues(source), config.master_key, from, secretBox);
    await database.migrateToLatest(target).catch(refused);
    const out = (line: string) => (flags.json ? undefined : process.stdout.write(`${line}\n`));
    // The header comes with the first table, once the target has been found empty (or --force).
    let header = `svcgw: copying ${join(from, database.DATABASE_FILE)} to ${redactUrlPassword(flags.to)}\n`;
    header += `${'table'.padEnd(28)}${'sqlite'.padStart(12)}${'postgresql'.padStart(12)}\n`;
    const counts = await copy
      .copySqliteToPostgres({
        source,
        target,
        replace: flags.force === true,
        exportsDir: join(from, 'exports'),
        ...(flags.batchSize ? { batchRows: flags.batchSize } : {}),
        onTable: (c) => {
          const target = c.target === null ? '-' : String(c.target);
          const note = c.skipped
            ? `  not copied: ${c.skipped}`
            : c.target !== c.source
              ? '  DIFFERS'
              : c.from
                ? `  from ${c.from}`
                : '';
          out(`${header}${c.table.padEnd(28)}${String(c.source).padStart(12)}${target.padStart(12)}${note}`);
          header = '';
        },
      })
      .catch((error: unknown) => {
        if (!(error instanceof copy.CountMismatchError)) return refused(error);
        if (flags.json) printJson(false, error.counts, masterKey);
        throw new FatalError(error.message, 1);
      });
    if (flags.json) {
      printJson(true, counts, masterKey);
      return;
    }
    const copied = counts.filter((c) => c.target !== null);
    out(
      `svcgw: ${copied.length} tables, ${copied.reduce((n, c) => n + c.source, 0)} rows copied; every row count matches.`,
    );
    out(masterKeyAdvice(masterKey, from));
  } catch (error) {
    refused(error);
  } finally {
    source.close();
    await target.destroy();
  }
}

interface MasterKeyCheck {
  /** Where the key that decrypts the credentials came from; null when there is nothing to decrypt and no key. */
  source: 'SVCGW_MASTER_KEY' | 'master.key' | null;
  keyId: string | null;
  credentials: number;
}

/**
 * The copied credentials stay encrypted with the source's master key: it must decrypt every one
 * of them now, or the PostgreSQL instances could never use them.
 */
function checkMasterKey(
  sealed: string[],
  setting: string | undefined,
  from: string,
  box: typeof import('../../lib/secret-box.js'),
): MasterKeyCheck {
  const file = join(from, box.MASTER_KEY_FILE);
  let key: Buffer | null = null;
  let source: MasterKeyCheck['source'] = null;
  if (setting !== undefined) {
    key = box.parseMasterKey(setting, 'master_key setting (SVCGW_MASTER_KEY)');
    source = 'SVCGW_MASTER_KEY';
  } else if (existsSync(file)) {
    key = box.parseMasterKey(readFileSync(file, 'utf8'), `master key file ${file}`);
    source = 'master.key';
  }
  if (!key) {
    if (sealed.length === 0) return { source: null, keyId: null, credentials: 0 };
    throw new FatalError(
      `the ${sealed.length} stored credential secrets are encrypted with a master key this command cannot find: ` +
        `set SVCGW_MASTER_KEY to the key the server used, or put its master.key back in ${from}. Nothing was copied.`,
      1,
    );
  }
  const opened = box.createSecretBox(key);
  for (const value of sealed) opened.decrypt(value);
  return { source, keyId: opened.keyId, credentials: sealed.length };
}

function masterKeyAdvice(check: MasterKeyCheck, from: string): string {
  if (check.source === null)
    return 'Master key: no stored credential to decrypt; give every PostgreSQL instance the same SVCGW_MASTER_KEY all the same.';
  const where =
    check.source === 'SVCGW_MASTER_KEY'
      ? 'the SVCGW_MASTER_KEY given here'
      : `the contents of ${join(from, 'master.key')}`;
  return (
    `Master key: the ${check.credentials} stored credential secrets decrypt with the master key (key id ${check.keyId}) of ${from}. ` +
    `Start every PostgreSQL instance with SVCGW_MASTER_KEY set to it (${where}); with any other key they cannot be decrypted.`
  );
}

function printJson(
  ok: boolean,
  counts: import('../../storage/postgres/copy-from-sqlite.js').TableCount[],
  key: MasterKeyCheck,
) {
  process.stdout.write(
    `${JSON.stringify({
      ok,
      tables: counts.map((c) => ({
        table: c.table,
        sqlite: c.source,
        postgresql: c.target,
        ...(c.skipped ? { skipped: c.skipped } : {}),
        ...(c.from ? { from: c.from } : {}),
      })),
      master_key: { source: key.source, key_id: key.keyId, credentials_checked: key.credentials },
    })}\n`,
  );
}

/** Closes a database before the refusal is reported, so that the process can end. */
const refuse =
  (db: { destroy(): Promise<void> }, then: (error: unknown) => never) =>
  async (error: unknown): Promise<never> => {
    await db.destroy();
    return then(error);
  };
