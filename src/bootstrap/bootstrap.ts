import { generateRawKey, hashKey, keyHint } from '../auth/api-key-service.js';
import { ALL_SCOPES } from '../auth/scopes.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { Db } from '../storage/database.js';

export interface BootstrapResult {
  /** True when this call created the organisation; false when it already existed. */
  created: boolean;
  /** The owner admin key, only when it was created now; it is never stored in clear. */
  adminApiKey: string | null;
  /** True when the key came from SVCGW_BOOTSTRAP_ADMIN_KEY rather than being generated. */
  keyFromSettings: boolean;
  organisationId: string;
  workspaceId: string;
}

export const DEFAULT_WORKSPACE_SLUG = 'default';

/**
 * Creates, on the first start only, the organisation, its default workspace, the owner user
 * and the owner's admin API key, in one transaction so that a crash leaves nothing half made.
 */
export async function bootstrap(
  db: Db,
  options: { clock: Clock; ownerEmail: string; adminKey?: string | undefined },
): Promise<BootstrapResult> {
  return db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom('organisations').select('id').orderBy('created_at').executeTakeFirst();
    if (existing) {
      const workspace = await trx
        .selectFrom('workspaces')
        .select('id')
        .where('organisation_id', '=', existing.id)
        .where('is_default', '=', 1)
        .executeTakeFirstOrThrow();
      return {
        created: false,
        adminApiKey: null,
        keyFromSettings: false,
        organisationId: existing.id,
        workspaceId: workspace.id,
      };
    }

    const now = new Date(options.clock.now()).toISOString();
    const stamps = { created_at: now, last_updated_at: now };
    const organisationId = newId();
    const workspaceId = newId();
    const userId = newId();
    const rawKey = options.adminKey ?? generateRawKey();

    await trx
      .insertInto('organisations')
      .values({ id: organisationId, name: 'Default organisation', ...stamps })
      .execute();
    await trx
      .insertInto('workspaces')
      .values({
        id: workspaceId,
        organisation_id: organisationId,
        slug: DEFAULT_WORKSPACE_SLUG,
        name: 'Default workspace',
        description: null,
        status: 'active',
        is_default: 1,
        ...stamps,
      })
      .execute();
    await trx
      .insertInto('users')
      .values({
        id: userId,
        organisation_id: organisationId,
        email: options.ownerEmail,
        first_name: null,
        last_name: null,
        role: 'owner',
        ...stamps,
      })
      .execute();
    await trx
      .insertInto('workspace_members')
      .values({ workspace_id: workspaceId, user_id: userId, role: 'admin', created_at: now })
      .execute();
    await trx
      .insertInto('api_keys')
      .values(
        ownerAdminKeyRow({
          id: newId(),
          organisationId,
          userId,
          rawKey,
          name: 'Owner admin key (bootstrap)',
          description: 'Created on the first start.',
          now,
        }),
      )
      .execute();

    return {
      created: true,
      adminApiKey: rawKey,
      keyFromSettings: options.adminKey !== undefined,
      organisationId,
      workspaceId,
    };
  });
}

/** The row of an owner's admin key with every scope, as the first start and `admin recover` issue it. */
export function ownerAdminKeyRow(key: {
  id: string;
  organisationId: string;
  userId: string;
  rawKey: string;
  name: string;
  description: string;
  now: string;
}) {
  return {
    id: key.id,
    organisation_id: key.organisationId,
    workspace_id: null,
    user_id: key.userId,
    type: 'organisation-service' as const,
    name: key.name,
    description: key.description,
    key_hash: hashKey(key.rawKey),
    key_hint: keyHint(key.rawKey),
    scopes: JSON.stringify(ALL_SCOPES),
    status: 'active' as const,
    expires_at: null,
    creation_mode: 'auto' as const,
    created_by_key_id: null,
    created_at: key.now,
    last_updated_at: key.now,
  };
}
