import { sql } from 'kysely';
import type { Db } from '../../storage/database.js';

export { parseRollupMetadataKeys } from '../../config/rollup-metadata-keys.js';

/**
 * The metadata key that names the end user of a request, as in the reference gateway
 * (`x-service-metadata: {"_user": "…"}`); the users graphs and group count its values.
 */
export const USER_METADATA_KEY = '_user';

const HOUR_MS = 3_600_000;

/**
 * Makes `analytics_metadata_keys` list the setting's keys and combinations (by canonical name,
 * parseRollupMetadataKeys), which every instance's request-log writer then sums in every batch.
 * A new key (or combination) is whole from the second full hour after now: the
 * batches being written meanwhile (by any instance, whatever its clock says within the hour)
 * may not have summed it. A key no longer listed is dropped with its rollups; dropped and listed
 * again, it starts over. Instances with different settings undo each other's changes at start.
 */
export async function syncRollupMetadataKeys(db: Db, keys: readonly string[], now: number): Promise<void> {
  const sinceHour = Math.floor(now / HOUR_MS) + 2;
  for (const key of keys) {
    await db
      .insertInto('analytics_metadata_keys')
      .values({ metadata_key: key, since_hour: sinceHour })
      .onConflict((oc) => oc.column('metadata_key').doNothing())
      .execute();
  }
  const listed = await db.selectFrom('analytics_metadata_keys').select('metadata_key').execute();
  for (const { metadata_key: key } of listed) {
    if (keys.includes(key)) continue;
    // The key first: from then on no writer sums it and no reader reads its rollups.
    await db.deleteFrom('analytics_metadata_keys').where('metadata_key', '=', key).execute();
    await sql`DELETE FROM analytics_metadata_rollups WHERE metadata_key = ${key}`.execute(db);
    await sql`DELETE FROM analytics_narrow_rollups WHERE metadata_key = ${key}`.execute(db);
  }
}
