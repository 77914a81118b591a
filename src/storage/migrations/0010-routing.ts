import type { Kysely } from 'kysely';

/**
 * Config routing: an API key's defaults (metadata, default config), and what the request log
 * learns from routing and tracing (the config used, each attempt, retries, spans, prompt).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('defaults', 'text').execute();
  for (const column of ['config_id', 'attempts', 'span_id', 'parent_span_id', 'span_name', 'prompt_id']) {
    await db.schema.alterTable('request_logs').addColumn(column, 'text').execute();
  }
  await db.schema
    .alterTable('request_logs')
    .addColumn('retry_count', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('defaults').execute();
  for (const column of [
    'config_id',
    'attempts',
    'span_id',
    'parent_span_id',
    'span_name',
    'prompt_id',
    'retry_count',
  ]) {
    await db.schema.alterTable('request_logs').dropColumn(column).execute();
  }
}
