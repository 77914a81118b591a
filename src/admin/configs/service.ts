import type { Principal } from '../../auth/principal.js';
import { parseGatewayConfig, type GatewayConfig } from '../../gateway/config/index.js';
import { redactCheckParameters } from '../../guardrails/registry.js';
import { usesIn } from '../../guardrails/store/index.js';
import type { GuardrailUseCheck } from '../guardrails/references.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, notFound } from '../../lib/errors.js';
import { isUuid, newId, slugify } from '../../lib/ids.js';
import { REDACTED } from '../../lib/redact.js';
import type { ConfigRepository, ConfigRow, ConfigVersionRow } from '../../storage/repositories/configs.js';
import { isUniqueViolation } from '../../storage/repositories/integrations.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import { pageWindow } from '../shared/pagination.js';
import { assertWorkspaceReachable, resolveWorkspace } from '../shared/workspace-access.js';
import type {
  ConfigObject,
  ConfigSummary,
  ConfigVersionObject,
  CreateConfigBody,
  ListConfigsQuery,
  UpdateConfigBody,
} from './schemas.js';
import { insertUnique, slugTaken } from '../shared/unique-insert.js';

/**
 * Checks a config body and turns its problems into one AB01 error: `param` is the path of the
 * first problem, the message lists them all, so that an author can fix everything at once.
 */
export function validateConfig(value: unknown): GatewayConfig {
  const result = parseGatewayConfig(value);
  // Stored configs hold no provider keys: keys are kept encrypted in integrations and providers.
  const issues = result.ok
    ? [
        ...inlineKeys(result.config, '').map((path) => ({
          path,
          message:
            'a stored config cannot hold a provider key; store it as a provider (or integration) and name it with provider: "@slug"',
        })),
        ...inlineCheckSecrets(result.config).map((path) => ({
          path,
          message:
            'a stored config cannot hold a guardrail secret (webhook headers, an apiKey); save the guardrail (POST /v1/guardrails), where secrets are write-only, and name it by slug',
        })),
      ]
    : result.issues;
  if (result.ok && issues.length === 0) return result.config;
  const paramOf = (path: string) =>
    path === '' ? 'config' : path.startsWith('[') ? `config${path}` : `config.${path}`;
  const list = issues.map((issue) => `${paramOf(issue.path)}: ${issue.message}`).join('; ');
  throw new AppError(
    'AB01_INVALID_CONFIG',
    `Invalid config (${issues.length} problem${issues.length === 1 ? '' : 's'}): ${list}`,
    {
      param: paramOf(issues[0]?.path ?? ''),
    },
  );
}

/** Paths of inline guardrail checks whose parameters hold a secret (what a check masks when shown). */
function inlineCheckSecrets(config: GatewayConfig): string[] {
  return usesIn(config).flatMap((use) =>
    use.kind === 'inline'
      ? use.checks
          .filter(
            (check) =>
              JSON.stringify(redactCheckParameters(check.id, check.parameters)) !== JSON.stringify(check.parameters),
          )
          .map(() => use.path)
      : [],
  );
}

/** Paths of every `api_key` in the config tree. */
function inlineKeys(node: unknown, path: string): string[] {
  if (Array.isArray(node)) return node.flatMap((item, i) => inlineKeys(item, `${path}[${i}]`));
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) => {
    const at = path === '' ? key : `${path}.${key}`;
    return key === 'api_key' && value !== undefined ? [at] : inlineKeys(value, at);
  });
}

/** The rules of configs: versions, slugs, and which workspace a key may reach. */
export function createConfigService(deps: {
  configs: ConfigRepository;
  workspaces: WorkspaceRepository;
  clock: Clock;
  /** Checks the guardrails a config uses against its workspace (they must exist and be reachable). */
  checkGuardrails?: GuardrailUseCheck;
}) {
  const checkGuardrails = (config: GatewayConfig, organisationId: string, workspaceId: string) =>
    deps.checkGuardrails?.({ organisationId, workspaceId, uses: usesIn(config), field: 'config' });
  const now = () => new Date(deps.clock.now()).toISOString();

  /** `:slug` takes the config's id or its slug (the active one first). */
  async function findConfig(principal: Principal, slugOrId: string): Promise<ConfigRow> {
    const row = isUuid(slugOrId)
      ? await deps.configs.findById(principal.organisationId, slugOrId.toLowerCase())
      : await deps.configs.findBySlug(principal.organisationId, slugOrId);
    if (!row) throw notFound('Config');
    assertWorkspaceReachable(principal, row.workspace_id);
    return row;
  }

  async function latestVersion(row: ConfigRow): Promise<ConfigVersionRow> {
    const version = await deps.configs.findVersion(row.id, row.latest_version_id);
    if (!version) throw new Error(`config ${row.id} has no version ${row.latest_version_id}`);
    return version;
  }

  async function assertSlugFree(organisationId: string, slug: string, exceptId?: string): Promise<void> {
    const taken = await deps.configs.findActiveBySlug(organisationId, slug);
    if (taken && taken.id !== exceptId)
      throw new AppError('CONFLICT', `An active config with slug ${slug} already exists.`, { param: 'slug' });
  }

  return {
    async list(principal: Principal, query: ListConfigsQuery) {
      const workspace = await resolveWorkspace(deps.workspaces, principal, query.workspace_id, { required: false });
      const { total, rows } = await deps.configs.list({
        organisationId: principal.organisationId,
        ...(workspace ? { workspaceId: workspace.id } : {}),
        status: query.status,
        ...pageWindow(query),
      });
      return {
        total,
        data: rows.map((row) => ({ ...toSummary(row, row.version), ...authors(row.owner_id, row.updated_by) })),
      };
    },

    /** Admin keys without `workspace_id` create in the default workspace; workspace keys in their own. */
    async create(principal: Principal, body: CreateConfigBody): Promise<{ row: ConfigRow; version: ConfigVersionRow }> {
      const config = validateConfig(body.config);
      const workspace =
        (await resolveWorkspace(deps.workspaces, principal, body.workspace_id, { required: false })) ??
        (await deps.workspaces.findDefault(principal.organisationId));
      if (!workspace) throw new AppError('INVALID_REQUEST', 'workspace_id is required.', { param: 'workspace_id' });
      await checkGuardrails(config, principal.organisationId, workspace.id);
      const slug = body.slug ?? slugify(body.name);
      await assertSlugFree(principal.organisationId, slug);
      const stamp = now();
      const version: ConfigVersionRow = {
        id: newId(),
        config_id: newId(),
        version: 1,
        config: JSON.stringify(config),
        created_at: stamp,
        created_by_key_id: principal.keyId,
      };
      const row: ConfigRow = {
        id: version.config_id,
        organisation_id: principal.organisationId,
        workspace_id: workspace.id,
        slug,
        name: body.name,
        status: 'active',
        latest_version_id: version.id,
        created_at: stamp,
        last_updated_at: stamp,
      };
      await insertUnique(() => deps.configs.insert(row, version), slugTaken(slug));
      return { row, version };
    },

    async get(principal: Principal, slugOrId: string): Promise<ConfigObject> {
      const row = await findConfig(principal, slugOrId);
      const version = await latestVersion(row);
      const first = version.version === 1 ? version : await deps.configs.findVersionNumber(row.id, 1);
      return {
        ...toSummary(row, version.version),
        ...authors(first?.created_by_key_id ?? null, version.created_by_key_id),
        config: publicConfig(version.config),
      };
    },

    /** A changed `config` becomes a new version (the latest, hence the one in use); name and status change in place. */
    async update(
      principal: Principal,
      slugOrId: string,
      body: UpdateConfigBody,
    ): Promise<{ row: ConfigRow; versionId: string }> {
      const row = await findConfig(principal, slugOrId);
      const config = body.config !== undefined ? validateConfig(body.config) : undefined;
      if (config !== undefined) await checkGuardrails(config, row.organisation_id, row.workspace_id);
      const patch: Partial<ConfigRow> = { last_updated_at: now() };
      if (body.name !== undefined) patch.name = body.name;
      if (body.status !== undefined && body.status !== row.status) {
        if (body.status === 'active') await assertSlugFree(row.organisation_id, row.slug, row.id);
        patch.status = body.status;
      }
      let versionId = row.latest_version_id;
      try {
        if (config !== undefined) {
          const version = await deps.configs.addVersion(
            row.id,
            {
              id: newId(),
              config: JSON.stringify(config),
              created_at: patch.last_updated_at!,
              created_by_key_id: principal.keyId,
            },
            patch,
          );
          versionId = version.id;
        } else {
          await deps.configs.update(row.id, patch);
        }
      } catch (error) {
        if (isUniqueViolation(error))
          throw new AppError('CONFLICT', `An active config with slug ${row.slug} already exists.`, {
            param: 'slug',
            cause: error,
          });
        throw error;
      }
      return { row: { ...row, ...patch, latest_version_id: versionId }, versionId };
    },

    /** Deleting archives: the config stops being usable by slug in requests but stays readable, versions included. */
    async archive(principal: Principal, slugOrId: string): Promise<ConfigRow> {
      const row = await findConfig(principal, slugOrId);
      if (row.status !== 'archived') await deps.configs.update(row.id, { status: 'archived', last_updated_at: now() });
      return row;
    },

    async listVersions(principal: Principal, slugOrId: string): Promise<ConfigVersionObject[]> {
      const row = await findConfig(principal, slugOrId);
      const versions = await deps.configs.listVersions(row.id);
      const owner = versions.find((version) => version.version === 1)?.created_by_key_id ?? null;
      return versions.map((version) => toVersionObject(row, version, owner));
    },

    /** One version by number (`1`, `2`, …) or by version id. */
    async getVersion(principal: Principal, slugOrId: string, version: string): Promise<ConfigVersionObject> {
      const row = await findConfig(principal, slugOrId);
      const found = /^[1-9][0-9]{0,8}$/.test(version)
        ? await deps.configs.findVersionNumber(row.id, Number(version))
        : isUuid(version)
          ? await deps.configs.findVersion(row.id, version.toLowerCase())
          : undefined;
      if (!found) throw notFound('Config version', 'version');
      const first = found.version === 1 ? found : await deps.configs.findVersionNumber(row.id, 1);
      return toVersionObject(row, found, first?.created_by_key_id ?? null);
    },
  };
}

export type ConfigService = ReturnType<typeof createConfigService>;

function toSummary(row: ConfigRow, version: number): ConfigSummary {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    status: row.status,
    workspace_id: row.workspace_id,
    organisation_id: row.organisation_id,
    version_id: row.latest_version_id,
    version,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    is_default: 0,
    object: 'config',
  };
}

function toVersionObject(row: ConfigRow, version: ConfigVersionRow, ownerId: string | null): ConfigVersionObject {
  return {
    version_id: version.id,
    version: version.version,
    config_id: row.id,
    slug: row.slug,
    config: publicConfig(version.config),
    is_latest: version.id === row.latest_version_id,
    created_at: version.created_at,
    created_by_key_id: version.created_by_key_id,
    object: 'config_version',
    id: row.id,
    name: row.name,
    workspace_id: row.workspace_id,
    organisation_id: row.organisation_id,
    status: row.status,
    is_default: 0,
    ...authors(ownerId, version.created_by_key_id),
    last_updated_at: row.last_updated_at,
    format: 'json',
  };
}

/** `owner_id` and `updated_by` as the reference names them: API key ids, left out when unknown. */
function authors(ownerId: string | null, updatedBy: string | null): { owner_id?: string; updated_by?: string } {
  return { ...(ownerId ? { owner_id: ownerId } : {}), ...(updatedBy ? { updated_by: updatedBy } : {}) };
}

/** A stored config as the API shows it: inline `api_key` values are never sent back. */
function publicConfig(stored: string): Record<string, unknown> {
  return maskKeys(JSON.parse(stored) as Record<string, unknown>);
}

function maskKeys(node: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...node };
  if (typeof out['api_key'] === 'string') out['api_key'] = REDACTED;
  if (Array.isArray(out['targets'])) out['targets'] = (out['targets'] as Array<Record<string, unknown>>).map(maskKeys);
  return out;
}
