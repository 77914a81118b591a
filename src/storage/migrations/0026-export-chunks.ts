import type { Kysely } from 'kysely';

/**
 * Log export files in the database, for instances that share PostgreSQL: an export written by
 * one instance is downloaded through any other. One row per batch the export runner wrote, in
 * order. SQLite installations (one box) keep their files in `<data_dir>/exports`; the table is
 * created there too, so that both engines have the same schema.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('log_export_chunks')
    .addColumn('export_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('log_export_chunks_pkey', ['export_id', 'seq'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('log_export_chunks').execute();
}
