import type { Db } from '../database.js';
import type { IntegrationModelsTable } from '../schema.js';

export type IntegrationModelRow = IntegrationModelsTable;

/** The model entries of integrations, and the integration's `allow_all_models` switch. */
export function createIntegrationModelRepository(db: Db) {
  return {
    list: (integrationId: string) =>
      db
        .selectFrom('integration_models')
        .selectAll()
        .where('integration_id', '=', integrationId)
        .orderBy('slug')
        .execute(),

    /** Entries of several integrations at once (what `GET /v1/models` needs for a workspace). */
    listFor: (integrationIds: readonly string[]) =>
      integrationIds.length === 0
        ? Promise.resolve([] as IntegrationModelRow[])
        : db
            .selectFrom('integration_models')
            .selectAll()
            .where('integration_id', 'in', integrationIds)
            .orderBy('slug')
            .execute(),

    /**
     * Creates or updates the given entries (by slug) and sets `allow_all_models`, in one
     * transaction, so that a catalogue is never seen half-written.
     */
    upsert: (
      integrationId: string,
      rows: readonly IntegrationModelRow[],
      allowAllModels: number | undefined,
      stamp: string,
    ) =>
      db.transaction().execute(async (trx) => {
        for (const row of rows) {
          const { id: _id, created_at: _created, integration_id: _integration, slug: _slug, ...changes } = row;
          await trx
            .insertInto('integration_models')
            .values(row)
            .onConflict((oc) => oc.columns(['integration_id', 'slug']).doUpdateSet(changes))
            .execute();
        }
        const patch = allowAllModels === undefined ? {} : { allow_all_models: allowAllModels };
        await trx
          .updateTable('integrations')
          .set({ ...patch, last_updated_at: stamp })
          .where('id', '=', integrationId)
          .execute();
      }),

    /** Removes entries by slug; returns how many there were. */
    remove: async (integrationId: string, slugs: readonly string[]) => {
      const result = await db
        .deleteFrom('integration_models')
        .where('integration_id', '=', integrationId)
        .where('slug', 'in', slugs)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

export type IntegrationModelRepository = ReturnType<typeof createIntegrationModelRepository>;
