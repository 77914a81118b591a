import type { Db } from '../database.js';
import type { CredentialStatus, SecretManagerType, SecretReferencesTable } from '../schema.js';
import { isUuid } from '../../lib/ids.js';
import { activeFirst, pageByTags, type TagFilter } from './integrations.js';

export type SecretReferenceRow = SecretReferencesTable;

/** What refers to a secret reference: what its delete must wait for. */
export interface SecretReferenceUse {
  kind: 'integration' | 'virtual_key' | 'api_key' | 'mcp_integration';
  id: string;
  slug: string;
  /** The workspace of a virtual key or workspace API key; null for organisation-level ones. */
  workspaceId: string | null;
}

export function createSecretReferenceRepository(db: Db) {
  return {
    insert: (row: SecretReferenceRow) => db.insertInto('secret_references').values(row).execute(),

    findByIdOrSlug: (organisationId: string, idOrSlug: string) =>
      db
        .selectFrom('secret_references')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where(isUuid(idOrSlug) ? 'id' : 'slug', '=', isUuid(idOrSlug) ? idOrSlug.toLowerCase() : idOrSlug)
        .orderBy(activeFirst('status'))
        .orderBy('created_at', 'desc')
        .executeTakeFirst(),

    /** Active references by id (what stored mappings and rotation policies hold). */
    findActiveByIds: async (organisationId: string, ids: readonly string[]) =>
      ids.length === 0
        ? []
        : db
            .selectFrom('secret_references')
            .selectAll()
            .where('organisation_id', '=', organisationId)
            .where('id', 'in', [...ids])
            .where('status', '=', 'active')
            .execute(),

    slugTaken: async (organisationId: string, slug: string) =>
      (await db
        .selectFrom('secret_references')
        .select('id')
        .where('organisation_id', '=', organisationId)
        .where('slug', '=', slug)
        .where('status', '=', 'active')
        .executeTakeFirst()) !== undefined,

    /**
     * A page of the organisation's references. Search and tags run here over the organisation's
     * rows (JSON text and case-insensitive matching differ between the engines); an organisation
     * has tens of references, not thousands.
     */
    list: async (filter: {
      organisationId: string;
      status: CredentialStatus;
      managerType?: SecretManagerType;
      search?: string;
      tags?: TagFilter;
      limit: number;
      offset: number;
    }) => {
      let query = db
        .selectFrom('secret_references')
        .selectAll()
        .where('organisation_id', '=', filter.organisationId)
        .where('status', '=', filter.status);
      if (filter.managerType) query = query.where('manager_type', '=', filter.managerType);
      const rows = await query.orderBy('created_at', 'asc').orderBy('id').execute();
      const needle = filter.search?.toLowerCase();
      const found = needle
        ? rows.filter((row) => row.name.toLowerCase().includes(needle) || row.slug.toLowerCase().includes(needle))
        : rows;
      return pageByTags(found, filter.tags, filter);
    },

    /** The workspaces where an integration is used: those of its active providers. */
    providerWorkspaces: async (integrationId: string) =>
      (
        await db
          .selectFrom('providers')
          .select('workspace_id')
          .distinct()
          .where('integration_id', '=', integrationId)
          .where('status', '=', 'active')
          .execute()
      ).map((row) => row.workspace_id),

    /** The workspaces an MCP integration is used in: its own (a workspace integration), and its active servers'. */
    mcpIntegrationWorkspaces: async (integrationId: string) => {
      const [own, servers] = await Promise.all([
        db.selectFrom('mcp_integrations').select('workspace_id').where('id', '=', integrationId).executeTakeFirst(),
        db
          .selectFrom('mcp_servers')
          .select('workspace_id')
          .distinct()
          .where('integration_id', '=', integrationId)
          .where('status', '=', 'active')
          .execute(),
      ]);
      const ids = new Set(servers.map((row) => row.workspace_id));
      if (own?.workspace_id) ids.add(own.workspace_id);
      return [...ids];
    },

    update: (id: string, patch: Partial<SecretReferenceRow>) =>
      db.updateTable('secret_references').set(patch).where('id', '=', id).execute(),

    /**
     * Active integrations, virtual keys and API keys that name the reference: in their
     * `secret_mappings`, or (API keys) as the rotation policy's target. The id is searched as
     * text first, then each candidate's JSON is read to be sure.
     */
    findUses: async (organisationId: string, referenceId: string): Promise<SecretReferenceUse[]> => {
      const pattern = `%${referenceId}%`;
      const [integrations, virtualKeys, apiKeys, mcpIntegrations] = await Promise.all([
        db
          .selectFrom('integrations')
          .select(['id', 'slug', 'secret_mappings'])
          .where('organisation_id', '=', organisationId)
          .where('status', '=', 'active')
          .where('secret_mappings', 'like', pattern)
          .execute(),
        db
          .selectFrom('virtual_keys')
          .select(['id', 'slug', 'workspace_id', 'secret_mappings'])
          .where('organisation_id', '=', organisationId)
          .where('status', '=', 'active')
          .where('secret_mappings', 'like', pattern)
          .execute(),
        db
          .selectFrom('api_keys')
          .select(['id', 'name', 'workspace_id', 'rotation_policy'])
          .where('organisation_id', '=', organisationId)
          .where('status', '!=', 'revoked')
          .where('rotation_policy', 'like', pattern)
          .execute(),
        db
          .selectFrom('mcp_integrations')
          .select(['id', 'slug', 'workspace_id', 'secret_mappings'])
          .where('organisation_id', '=', organisationId)
          .where('status', '=', 'active')
          .where('secret_mappings', 'like', pattern)
          .execute(),
      ]);
      const maps = (json: string) =>
        (JSON.parse(json) as Array<{ secret_reference_id: string }>).some((m) => m.secret_reference_id === referenceId);
      return [
        ...integrations
          .filter((row) => maps(row.secret_mappings))
          .map((row) => ({ kind: 'integration' as const, id: row.id, slug: row.slug, workspaceId: null })),
        ...virtualKeys
          .filter((row) => maps(row.secret_mappings))
          .map((row) => ({ kind: 'virtual_key' as const, id: row.id, slug: row.slug, workspaceId: row.workspace_id })),
        ...apiKeys
          .filter(
            (row) =>
              (JSON.parse(row.rotation_policy!) as { secret_reference_id?: string }).secret_reference_id ===
              referenceId,
          )
          .map((row) => ({ kind: 'api_key' as const, id: row.id, slug: row.name, workspaceId: row.workspace_id })),
        ...mcpIntegrations
          .filter((row) => maps(row.secret_mappings))
          .map((row) => ({ kind: 'mcp_integration' as const, id: row.id, slug: row.slug, workspaceId: null })),
      ];
    },
  };
}

export type SecretReferenceRepository = ReturnType<typeof createSecretReferenceRepository>;
