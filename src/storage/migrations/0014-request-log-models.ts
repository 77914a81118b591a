import type { Kysely } from 'kysely';

/**
 * The request log keeps both models: the one the client asked for (`requested_model`) next to
 * the one that answered (`model`), and the seconds of audio of transcriptions billed by duration.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').addColumn('requested_model', 'text').execute();
  await db.schema.alterTable('request_logs').addColumn('audio_seconds', 'real').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').dropColumn('requested_model').execute();
  await db.schema.alterTable('request_logs').dropColumn('audio_seconds').execute();
}
