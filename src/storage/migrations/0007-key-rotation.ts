import type { Kysely } from 'kysely';

const COLUMNS = [
  'previous_key_hash',
  'previous_key_expires_at',
  'rotation_policy',
  'next_rotation_at',
  'last_rotated_at',
  'new_key_pending_since',
] as const;
const INDEXES = [
  'api_keys_previous_key_hash',
  'api_keys_previous_key_expiry',
  'api_keys_next_rotation',
  'api_keys_status_expiry',
] as const;

/**
 * Key rotation: the previous secret's hash and the end of its transition, the rotation policy
 * (JSON) with its next due time in a column of its own so that the lifecycle worker finds due
 * keys by index, and the time of the last rotation (which names its notice).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of COLUMNS) await db.schema.alterTable('api_keys').addColumn(column, 'text').execute();
  // The verifier looks a raw key up by either hash; the worker scans transitions, due rotations and expiries.
  await db.schema.createIndex('api_keys_previous_key_hash').on('api_keys').column('previous_key_hash').execute();
  await db.schema
    .createIndex('api_keys_previous_key_expiry')
    .on('api_keys')
    .column('previous_key_expires_at')
    .execute();
  await db.schema.createIndex('api_keys_next_rotation').on('api_keys').column('next_rotation_at').execute();
  await db.schema.createIndex('api_keys_status_expiry').on('api_keys').columns(['status', 'expires_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const index of INDEXES) await db.schema.dropIndex(index).execute();
  for (const column of COLUMNS) await db.schema.alterTable('api_keys').dropColumn(column).execute();
}
