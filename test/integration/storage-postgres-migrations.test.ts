import { sql } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import { migrateToLatest, openDatabase, type Db } from '../../src/storage/database.js';
import { migrationProvider } from '../../src/storage/migrations/index.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { postgresAvailable } from '../helpers/services.js';
import { makeTempDir } from '../helpers/start-test-server.js';

const hasPostgres = await postgresAvailable();

function open(url: string): Db {
  const db = openDatabase({ data_dir: '/nonexistent', database_url: url });
  onTestFinished(() => db.destroy());
  return db;
}

const allMigrations = async () => Object.keys(await migrationProvider.getMigrations());

describe.skipIf(!hasPostgres)('migrations on PostgreSQL', () => {
  it('run once when several instances start together, and give the engine its own wide types', async () => {
    const url = await createTestDatabase();
    const instances = [open(url), open(url), open(url)];
    const applied = await Promise.all(instances.map((db) => migrateToLatest(db)));
    // One instance ran them all; the others waited for it and found nothing left.
    expect(applied.map((names) => names.length).sort((a, b) => a - b)).toEqual([0, 0, (await allMigrations()).length]);

    const db = instances[0]!;
    const { rows } = await sql<{ column_name: string; data_type: string }>`
      select column_name, data_type from information_schema.columns
      where table_name = 'request_logs' and column_name in ('seq', 'cost', 'status_code')
      order by column_name`.execute(db);
    expect(rows).toEqual([
      { column_name: 'cost', data_type: 'double precision' },
      { column_name: 'seq', data_type: 'bigint' },
      { column_name: 'status_code', data_type: 'bigint' },
    ]);
    // Numbers come back as numbers, as they do from SQLite.
    const count = await db
      .selectFrom('kysely_migration' as never)
      .select(sql<number>`count(*)`.as('n'))
      .executeTakeFirstOrThrow();
    expect(count).toEqual({ n: (await allMigrations()).length });
  });

  it('refuses an instance older than the schema, naming the unknown migrations', async () => {
    const url = await createTestDatabase();
    const db = open(url);
    await migrateToLatest(db);
    await sql`insert into kysely_migration (name, timestamp) values ('9999-from-the-future', '2030-01-01T00:00:00.000Z')`.execute(
      db,
    );
    await expect(migrateToLatest(db)).rejects.toThrow(
      /the database was migrated by a newer svcgw \(migrations 9999-from-the-future are unknown to this version\)/,
    );
  });
});

describe('migrations on SQLite', () => {
  it('refuse an instance older than the schema too', async () => {
    const db = openDatabase({ data_dir: makeTempDir(), database_url: undefined });
    onTestFinished(() => db.destroy());
    expect(await migrateToLatest(db)).toEqual(await allMigrations());
    await sql`insert into kysely_migration (name, timestamp) values ('9999-from-the-future', '2030-01-01T00:00:00.000Z')`.execute(
      db,
    );
    await expect(migrateToLatest(db)).rejects.toThrow(/migrated by a newer svcgw/);
  });
});
