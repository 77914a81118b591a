import type { Kysely } from 'kysely';

/**
 * The response cache (src/cache): one row per cached answer. `cache_key` is the hash of the
 * whole normalised request (organisation, workspace and namespace included), so it is the
 * primary key; semantic entries also carry the partition they are searched in, the embedding
 * of their last user message and its bit sketch.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('cache_entries')
    .addColumn('cache_key', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'integer', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('is_stream', 'integer', (c) => c.notNull())
    .addColumn('headers', 'text', (c) => c.notNull())
    .addColumn('partition_key', 'text')
    .addColumn('embedding_sketch', 'blob')
    .addColumn('embedding', 'blob')
    .addColumn('body', 'blob', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('cache_entries_expires_at').on('cache_entries').column('expires_at').execute();
  // Covers the load of a semantic partition: its sketches are read from the index alone, not
  // from table rows that each fill a page with their embedding.
  await db.schema
    .createIndex('cache_entries_partition')
    .on('cache_entries')
    .columns(['partition_key', 'expires_at', 'created_at', 'cache_key', 'embedding_sketch'])
    .where('partition_key', 'is not', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('cache_entries').execute();
}
