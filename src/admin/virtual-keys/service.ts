import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { newId, slugify } from '../../lib/ids.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { type IntegrationRepository } from '../../storage/repositories/integrations.js';
import type { VirtualKeyRepository, VirtualKeyRow } from '../../storage/repositories/virtual-keys.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import { checkHostConfigured, requireProviderType } from '../credentials/provider-types.js';
import { maskConfigurations, sealConfigurations, sealKey } from '../credentials/secrets.js';
import { credentialWorkspace } from '../credentials/workspace.js';
import { limitFieldsOf, limitPatch, newLimitColumns, shownStatus } from '../credentials/limits.js';
import { mergeCamelSettings } from './camel-fields.js';
import { mappingsOf, type SecretMappingRules } from '../secret-references/mappings.js';
import { pageWindow } from '../shared/pagination.js';
import { assertWorkspaceReachable, resolveWorkspace } from '../shared/workspace-access.js';
import type { CreateVirtualKeyBody, ListVirtualKeysQuery, UpdateVirtualKeyBody, VirtualKeyObject } from './schemas.js';
import { insertUnique, slugTaken } from '../shared/unique-insert.js';

/**
 * Virtual keys, the legacy workspace credential: a provider type and its key in one record,
 * named in the gateway by `x-service-virtual-key`. Slugs are unique in the organisation.
 */
export function createVirtualKeyService(deps: {
  virtualKeys: VirtualKeyRepository;
  integrations: IntegrationRepository;
  workspaces: WorkspaceRepository;
  secretBox: SecretBox;
  clock: Clock;
  mappings: SecretMappingRules;
  onChange: () => void;
}) {
  const now = () => new Date(deps.clock.now()).toISOString();

  async function find(principal: Principal, idOrSlug: string): Promise<VirtualKeyRow> {
    const row = await deps.virtualKeys.findByIdOrSlug(principal.organisationId, idOrSlug);
    if (!row) throw notFound(`Virtual key ${idOrSlug}`);
    assertWorkspaceReachable(principal, row.workspace_id);
    return row;
  }

  return {
    async create(principal: Principal, body: CreateVirtualKeyBody): Promise<VirtualKeyRow> {
      const workspace = await credentialWorkspace(deps.workspaces, deps.integrations, principal, body.workspace_id);
      if (workspace.status !== 'active') throw invalid('workspace_id', `Workspace ${workspace.slug} is archived.`);
      const definition = requireProviderType(body.provider, 'provider');
      const configurations = mergeCamelSettings(body, undefined) ?? {};
      checkHostConfigured(definition, configurations, 'configurations');
      if (body.key === undefined && !deps.mappings.mapsKey(body.secret_mappings))
        throw invalid('key', 'key is required, unless secret_mappings maps target_field key.');
      const slug = body.slug ?? slugify(body.name);
      if (await deps.virtualKeys.slugTaken(principal.organisationId, slug)) {
        throw new AppError('CONFLICT', `A virtual key with slug ${slug} already exists.`, { param: 'slug' });
      }
      const stamp = now();
      const row: VirtualKeyRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        workspace_id: workspace.id,
        slug,
        name: body.name,
        provider: definition.name,
        ...sealKey(deps.secretBox, body.key ?? null),
        note: body.note ?? null,
        configurations: sealConfigurations(deps.secretBox, configurations),
        status: 'active',
        created_at: stamp,
        last_updated_at: stamp,
        last_reset_at: null,
        secret_mappings: body.secret_mappings
          ? await deps.mappings.store(principal, body.secret_mappings, [workspace.id])
          : '[]',
        ...newLimitColumns(body, deps.clock.now()),
      };
      await insertUnique(() => deps.virtualKeys.insert(row), slugTaken(slug));
      deps.onChange();
      return row;
    },

    /** Without workspace_id, an admin key lists the virtual keys of every workspace. */
    async list(principal: Principal, query: ListVirtualKeysQuery) {
      const workspace = await resolveWorkspace(deps.workspaces, principal, query.workspace_id, { required: false });
      const { total, rows } = await deps.virtualKeys.list({
        organisationId: principal.organisationId,
        ...(workspace ? { workspaceId: workspace.id } : {}),
        status: query.status,
        ...pageWindow(query),
      });
      return { total, data: rows.map((row) => toVirtualKeyObject(row, deps.clock.now())) };
    },

    get: async (principal: Principal, idOrSlug: string) =>
      toVirtualKeyObject(await find(principal, idOrSlug), deps.clock.now()),

    async update(principal: Principal, idOrSlug: string, body: UpdateVirtualKeyBody): Promise<VirtualKeyRow> {
      const row = await find(principal, idOrSlug);
      if (row.status !== 'active') throw invalid('slug', `Virtual key ${row.slug} is archived and cannot be changed.`);
      const patch: Partial<VirtualKeyRow> = { last_updated_at: now() };
      if (body.name !== undefined) patch.name = body.name;
      if (body.note !== undefined) patch.note = body.note;
      if (body.key !== undefined) Object.assign(patch, sealKey(deps.secretBox, body.key));
      const configurations = mergeCamelSettings(body, maskConfigurations(row.configurations));
      if (configurations !== undefined) {
        checkHostConfigured(requireProviderType(row.provider, 'provider'), configurations, 'configurations');
        patch.configurations = sealConfigurations(deps.secretBox, configurations, row.configurations);
      }
      Object.assign(patch, limitPatch(row, body, deps.clock.now()));
      if (body.secret_mappings !== undefined) {
        if (row.encrypted_key === null && body.key === undefined && !deps.mappings.mapsKey(body.secret_mappings))
          throw invalid(
            'secret_mappings',
            'This virtual key has no stored key: keep a mapping of target_field key, or send key.',
          );
        patch.secret_mappings = await deps.mappings.store(principal, body.secret_mappings, [row.workspace_id]);
      }
      await deps.virtualKeys.update(row.id, patch);
      deps.onChange();
      return { ...row, ...patch };
    },

    /** Deleting archives: the key stops resolving at once and its slug is free again. */
    async archive(principal: Principal, idOrSlug: string): Promise<VirtualKeyRow> {
      const row = await find(principal, idOrSlug);
      if (row.status !== 'archived') {
        await deps.virtualKeys.update(row.id, { status: 'archived', last_updated_at: now() });
        deps.onChange();
      }
      return row;
    },
  };
}

export type VirtualKeyService = ReturnType<typeof createVirtualKeyService>;

export function toVirtualKeyObject(row: VirtualKeyRow, now: number): VirtualKeyObject {
  const configurations = maskConfigurations(row.configurations);
  return {
    id: row.id,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    slug: row.slug,
    name: row.name,
    provider: row.provider,
    note: row.note,
    masked_key: row.key_hint,
    configurations,
    model_config: configurations,
    status: shownStatus(row.status, row.expires_at, now),
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    last_reset_at: row.last_reset_at,
    secret_mappings: mappingsOf(row.secret_mappings),
    ...limitFieldsOf(row),
    object: 'virtual-key',
  };
}
