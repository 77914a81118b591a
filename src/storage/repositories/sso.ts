import type { Db } from '../database.js';
import type { SsoLoginsTable, SsoSettingsTable, UsersTable, WorkspaceRole } from '../schema.js';

export type SsoSettingsRow = SsoSettingsTable;
export type SsoLoginRow = SsoLoginsTable;

/** Single sign-on settings of organisations, and the logins under way. */
export function createSsoRepository(db: Db) {
  return {
    /** The deployment's organisation (there is one; the login routes are public and name none). */
    firstOrganisationId: async (): Promise<string | undefined> =>
      (await db.selectFrom('organisations').select('id').orderBy('created_at').orderBy('id').executeTakeFirst())?.id,

    findSettings: (organisationId: string) =>
      db.selectFrom('sso_settings').selectAll().where('organisation_id', '=', organisationId).executeTakeFirst(),

    /** Sets the identity providers and provisioning, keeping the session settings. */
    saveProviders: (
      organisationId: string,
      values: Pick<SsoSettingsRow, 'oidc' | 'oidc_client_secret' | 'saml' | 'provisioning'>,
      stamp: string,
    ) =>
      db
        .insertInto('sso_settings')
        .values({
          organisation_id: organisationId,
          ...values,
          max_session_ttl: null,
          created_at: stamp,
          last_updated_at: stamp,
        })
        .onConflict((oc) => oc.column('organisation_id').doUpdateSet({ ...values, last_updated_at: stamp }))
        .execute(),

    /** Sets `max_session_ttl`, keeping the identity providers; `provisioning` is the default for a new row. */
    saveMaxSessionTtl: (organisationId: string, maxSessionTtl: number | null, provisioning: string, stamp: string) =>
      db
        .insertInto('sso_settings')
        .values({
          organisation_id: organisationId,
          oidc: null,
          oidc_client_secret: null,
          saml: null,
          provisioning,
          max_session_ttl: maxSessionTtl,
          created_at: stamp,
          last_updated_at: stamp,
        })
        .onConflict((oc) =>
          oc.column('organisation_id').doUpdateSet({ max_session_ttl: maxSessionTtl, last_updated_at: stamp }),
        )
        .execute(),

    insertLogin: (row: SsoLoginRow) => db.insertInto('sso_logins').values(row).execute(),

    findLogin: (id: string) => db.selectFrom('sso_logins').selectAll().where('id', '=', id).executeTakeFirst(),

    findLoginByCode: (codeHash: string) =>
      db.selectFrom('sso_logins').selectAll().where('code_hash', '=', codeHash).executeTakeFirst(),

    /**
     * Records the identity provider's answer, once: false when the login was already completed
     * (a replayed answer) or has expired.
     */
    completeLogin: async (
      id: string,
      done: { userId: string; subject: string; codeHash: string; now: string },
    ): Promise<boolean> => {
      const result = await db
        .updateTable('sso_logins')
        .set({ user_id: done.userId, subject: done.subject, code_hash: done.codeHash, completed_at: done.now })
        .where('id', '=', id)
        .where('completed_at', 'is', null)
        .where('expires_at', '>', done.now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Marks a completed login's code used, once: of two concurrent exchanges one wins. */
    consumeLogin: async (id: string, now: string): Promise<boolean> => {
      const result = await db
        .updateTable('sso_logins')
        .set({ consumed_at: now })
        .where('id', '=', id)
        .where('consumed_at', 'is', null)
        .where('completed_at', 'is not', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /**
     * Creates a first-time user of single sign-on with their memberships, in one transaction.
     * A concurrent first login of the same address fails on the unique e-mail of the organisation.
     */
    insertUser: (user: UsersTable, memberships: Array<{ workspaceId: string; role: WorkspaceRole }>) =>
      db.transaction().execute(async (trx) => {
        await trx.insertInto('users').values(user).execute();
        for (const membership of memberships)
          await trx
            .insertInto('workspace_members')
            .values({
              workspace_id: membership.workspaceId,
              user_id: user.id,
              role: membership.role,
              created_at: user.created_at,
              last_updated_at: user.created_at,
            })
            .execute();
      }),

    /** Forgets logins that ended (or were abandoned) more than a day ago. */
    purgeLogins: (before: string) => db.deleteFrom('sso_logins').where('expires_at', '<', before).execute(),
  };
}

export type SsoRepository = ReturnType<typeof createSsoRepository>;
