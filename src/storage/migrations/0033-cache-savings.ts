import type { Kysely } from 'kysely';

/**
 * What a cache hit saved: the provider a cached answer came from (so that a hit can be priced
 * as the provider call it replaced), and on each request log the cost of that call, US dollars
 * (null on requests that were not hits, and on hits that could not be priced).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('cache_entries').addColumn('provider', 'text').execute();
  await db.schema.alterTable('request_logs').addColumn('cache_savings', 'double precision').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').dropColumn('cache_savings').execute();
  await db.schema.alterTable('cache_entries').dropColumn('provider').execute();
}
