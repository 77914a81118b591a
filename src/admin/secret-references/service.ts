import type { z } from 'zod';
import { isOrgAdmin, type Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { newId, slugify } from '../../lib/ids.js';
import type { SecretBox } from '../../lib/secret-box.js';
import {
  AUTH_SCHEMAS,
  authMethodOf,
  inferAuthMethod,
  maskAuthConfig,
  sealAuthConfig,
  usesAmbientIdentity,
  type AuthConfig,
  type SecretManagerType,
} from '../../secrets/auth-config.js';
import { allowsWorkspace } from '../../secrets/target.js';
import type {
  SecretReferenceRepository,
  SecretReferenceRow,
  SecretReferenceUse,
} from '../../storage/repositories/secret-references.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import { parseTagFilter } from '../credentials/schemas.js';
import { pageWindow } from '../shared/pagination.js';
import type {
  CreateSecretReferenceBody,
  ListSecretReferencesQuery,
  SecretReferenceObject,
  UpdateSecretReferenceBody,
} from './schemas.js';
import { insertUnique, slugTaken } from '../shared/unique-insert.js';

/** What each manager's `secret_path` looks like; checked here so that a typo is a 400, not a failed read later. */
const SECRET_PATHS: Record<SecretManagerType, { pattern: RegExp; help: string }> = {
  aws_sm: {
    pattern: /^[A-Za-z0-9/_+=.@:-]{1,1024}$/,
    help: 'an AWS secret name or ARN (letters, digits and /_+=.@:-)',
  },
  azure_kv: { pattern: /^[0-9A-Za-z-]{1,127}$/, help: 'a Key Vault secret name (1 to 127 letters, digits and -)' },
  hashicorp_vault: {
    pattern: /^(?!.*(^|\/)\.\.?(\/|$))[A-Za-z0-9_.@-]+(\/[A-Za-z0-9_.@-]+)+$/,
    help: 'a Vault KV v2 path <mount>/<path>, such as secret/openai',
  },
};

/**
 * Secret references are organisation resources: only owners and admins (the
 * `secret_references` scopes) see or change them. A reference stores where a secret is and how
 * to sign in; the secret itself stays in the manager. Workspaces use a reference through the
 * integrations and virtual keys that map it, when its allowed list lets them.
 */
export function createSecretReferenceService(deps: {
  references: SecretReferenceRepository;
  workspaces: WorkspaceRepository;
  secretBox: SecretBox;
  clock: Clock;
  /** Whether sign-ins with the server's own identity are allowed (secret_manager_ambient_credentials). */
  ambientCredentials: boolean;
  /** Called after every change, so that the gateway stops using what it resolved before. */
  onChange: () => void;
}) {
  const now = () => new Date(deps.clock.now()).toISOString();

  function requireOrgAdmin(principal: Principal): void {
    if (!isOrgAdmin(principal))
      throw new AppError('ROLE_NOT_ALLOWED', 'Only organisation owners and admins manage secret references.');
  }

  async function find(principal: Principal, idOrSlug: string): Promise<SecretReferenceRow> {
    requireOrgAdmin(principal);
    const row = await deps.references.findByIdOrSlug(principal.organisationId, idOrSlug);
    if (!row) throw notFound(`Secret reference ${idOrSlug}`);
    return row;
  }

  /** The auth config checked against its manager's schema; `param` names the first bad field. */
  function checkAuth(type: SecretManagerType, given: Record<string, unknown>): Record<string, unknown> {
    const { schema, discriminator } = AUTH_SCHEMAS[type];
    const auth = withAuthMethod(type, given);
    const parsed = (schema as z.ZodType).safeParse(auth);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      if (issue.code === 'unrecognized_keys')
        throw invalid(
          `auth_config.${issue.keys[0]}`,
          `auth_config.${issue.keys[0]} is not a field of this sign-in method (a typo?).`,
        );
      const path = issue.path.length > 0 ? issue.path.join('.') : discriminator;
      const message =
        path === discriminator
          ? `auth_config.${discriminator} must be one of ${methodsOf(type).join(', ')} for manager_type ${type}.`
          : `auth_config.${path}: ${issue.message}`;
      throw invalid(`auth_config.${path}`, message);
    }
    const config = parsed.data as AuthConfig;
    if (!deps.ambientCredentials && usesAmbientIdentity(config))
      throw invalid(
        `auth_config.${discriminator}`,
        `${authMethodOf(config)} signs in with the server's own identity, which this server does not allow (setting secret_manager_ambient_credentials is off); store credentials in the reference instead.`,
      );
    return auth;
  }

  function checkPath(type: SecretManagerType, path: string): void {
    const rule = SECRET_PATHS[type];
    if (!rule.pattern.test(path)) throw invalid('secret_path', `secret_path must be ${rule.help}.`);
  }

  /** Workspace ids or slugs → ids, each of this organisation. */
  async function workspaceIds(principal: Principal, names: readonly string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const [index, name] of names.entries()) {
      const workspace = await deps.workspaces.findByIdOrSlug(principal.organisationId, name);
      if (!workspace)
        throw new AppError('NOT_FOUND', `Workspace ${name} not found.`, { param: `allowed_workspaces[${index}]` });
      if (!ids.includes(workspace.id)) ids.push(workspace.id);
    }
    return ids;
  }

  /** The workspace access a body asks for: every workspace, or the ones listed. */
  async function access(
    principal: Principal,
    body: { allow_all_workspaces?: boolean | undefined; allowed_workspaces?: string[] | undefined },
    current: { allowAll: boolean; allowed: string[] },
  ): Promise<{ allowAll: boolean; allowed: string[] }> {
    if (body.allow_all_workspaces === true && body.allowed_workspaces !== undefined)
      throw invalid('allowed_workspaces', 'allowed_workspaces cannot be given with allow_all_workspaces true.');
    if (body.allowed_workspaces !== undefined)
      return { allowAll: false, allowed: await workspaceIds(principal, body.allowed_workspaces) };
    if (body.allow_all_workspaces === true) return { allowAll: true, allowed: [] };
    if (body.allow_all_workspaces === false) {
      if (current.allowed.length === 0)
        throw invalid(
          'allowed_workspaces',
          'With allow_all_workspaces false, list the workspaces in allowed_workspaces.',
        );
      return { allowAll: false, allowed: current.allowed };
    }
    return current;
  }

  /** Workspaces that use the reference now, each with what uses it there: virtual keys, workspace API keys, providers of integrations. */
  async function workspacesUsing(uses: readonly SecretReferenceUse[]): Promise<Map<string, string[]>> {
    const using = new Map<string, string[]>();
    const add = (workspaceId: string, by: string) => using.set(workspaceId, [...(using.get(workspaceId) ?? []), by]);
    for (const use of uses) {
      if (use.kind === 'integration')
        for (const id of await deps.references.providerWorkspaces(use.id)) add(id, describeUse(use));
      else if (use.kind === 'mcp_integration')
        for (const id of await deps.references.mcpIntegrationWorkspaces(use.id)) add(id, describeUse(use));
      else if (use.workspaceId !== null) add(use.workspaceId, describeUse(use));
    }
    return using;
  }

  return {
    async create(principal: Principal, body: CreateSecretReferenceBody): Promise<SecretReferenceRow> {
      requireOrgAdmin(principal);
      if (body.organisation_id !== undefined && body.organisation_id !== principal.organisationId)
        throw new AppError('WORKSPACE_FORBIDDEN', 'organisation_id is not the organisation of this API key.', {
          param: 'organisation_id',
        });
      const auth = checkAuth(body.manager_type, body.auth_config);
      checkPath(body.manager_type, body.secret_path);
      // Neither field given: every workspace (the reference gateway's default).
      const unrestricted = body.allow_all_workspaces === undefined && body.allowed_workspaces === undefined;
      const { allowAll, allowed } = await access(principal, unrestricted ? { allow_all_workspaces: true } : body, {
        allowAll: true,
        allowed: [],
      });
      const slug = body.slug ?? slugify(body.name);
      if (await deps.references.slugTaken(principal.organisationId, slug))
        throw new AppError('CONFLICT', `A secret reference with slug ${slug} already exists.`, { param: 'slug' });
      const stamp = now();
      const row: SecretReferenceRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        slug,
        name: body.name,
        description: body.description ?? null,
        manager_type: body.manager_type,
        auth_config: sealAuthConfig(deps.secretBox, auth),
        secret_path: body.secret_path,
        secret_key: body.secret_key ?? null,
        allow_all_workspaces: allowAll ? 1 : 0,
        allowed_workspaces: JSON.stringify(allowed),
        tags: JSON.stringify(body.tags ?? {}),
        status: 'active',
        created_by: principal.userId,
        created_at: stamp,
        last_updated_at: stamp,
      };
      await insertUnique(() => deps.references.insert(row), slugTaken(slug));
      return row;
    },

    async list(principal: Principal, query: ListSecretReferencesQuery) {
      requireOrgAdmin(principal);
      const tags = parseTagFilter(query.tags);
      const { total, rows } = await deps.references.list({
        organisationId: principal.organisationId,
        status: query.status,
        ...(query.manager_type ? { managerType: query.manager_type } : {}),
        ...(query.search ? { search: query.search } : {}),
        ...(tags ? { tags } : {}),
        ...pageWindow(query),
      });
      return { total, data: rows.map(toSecretReferenceObject) };
    },

    get: async (principal: Principal, idOrSlug: string) => toSecretReferenceObject(await find(principal, idOrSlug)),

    async update(principal: Principal, idOrSlug: string, body: UpdateSecretReferenceBody): Promise<SecretReferenceRow> {
      const row = await find(principal, idOrSlug);
      if (row.status !== 'active')
        throw invalid('id', `Secret reference ${row.slug} is archived and cannot be changed.`);
      const patch: Partial<SecretReferenceRow> = {};
      if (body.name !== undefined) patch.name = body.name;
      if (body.description !== undefined) patch.description = body.description;
      if (body.auth_config !== undefined) {
        const auth = checkAuth(row.manager_type, body.auth_config);
        patch.auth_config = sealAuthConfig(deps.secretBox, auth, row.auth_config);
      }
      if (body.secret_path !== undefined) {
        checkPath(row.manager_type, body.secret_path);
        patch.secret_path = body.secret_path;
      }
      if (body.secret_key !== undefined) patch.secret_key = body.secret_key;
      if (body.tags !== undefined) patch.tags = JSON.stringify(body.tags ?? {});
      if (body.allow_all_workspaces !== undefined || body.allowed_workspaces !== undefined) {
        const { allowAll, allowed } = await access(principal, body, {
          allowAll: row.allow_all_workspaces === 1,
          allowed: JSON.parse(row.allowed_workspaces) as string[],
        });
        const next = { allow_all_workspaces: allowAll ? 1 : 0, allowed_workspaces: JSON.stringify(allowed) };
        // Narrowing must not cut off a workspace that uses the reference: that would break it silently.
        const using = await workspacesUsing(await deps.references.findUses(row.organisation_id, row.id));
        const cut = [...using].filter(([workspaceId]) => !allowsWorkspace(next, workspaceId));
        if (cut.length > 0) {
          const named = await Promise.all(
            cut.map(async ([id, by]) => `${(await deps.workspaces.findById(id))?.slug ?? id} (${by.join(', ')})`),
          );
          throw new AppError(
            'SECRET_REFERENCE_IN_USE',
            `Secret reference ${row.slug} is in use in workspaces the new allowed_workspaces leave out: ${named.join('; ')}. Remove those mappings first, or keep the workspaces.`,
            { param: 'allowed_workspaces' },
          );
        }
        Object.assign(patch, next);
      }
      patch.last_updated_at = now();
      await deps.references.update(row.id, patch);
      deps.onChange();
      return { ...row, ...patch };
    },

    /**
     * Deleting archives the reference (the audit trail keeps pointing at something readable),
     * and is refused while an integration, virtual key or API key rotation policy names it.
     */
    async archive(principal: Principal, idOrSlug: string): Promise<SecretReferenceRow> {
      const row = await find(principal, idOrSlug);
      if (row.status === 'archived') return row;
      const uses = await deps.references.findUses(row.organisation_id, row.id);
      if (uses.length > 0)
        throw new AppError(
          'SECRET_REFERENCE_IN_USE',
          `Secret reference ${row.slug} is in use by integrations or virtual keys: ${uses.map(describeUse).join(', ')}. Remove their secret_mappings (or rotation policy) first.`,
        );
      await deps.references.update(row.id, { status: 'archived', last_updated_at: now() });
      deps.onChange();
      return row;
    },
  };
}

export type SecretReferenceService = ReturnType<typeof createSecretReferenceService>;

/**
 * The auth config with its method field, inferred from the fields when left out (the reference
 * gateway's examples leave it out); a 400 naming `auth_config` when more than one method fits.
 */
function withAuthMethod(type: SecretManagerType, auth: Record<string, unknown>): Record<string, unknown> {
  const { discriminator } = AUTH_SCHEMAS[type];
  const inferred = inferAuthMethod(type, auth);
  if (inferred.kind === 'named' || inferred.kind === 'unknown') return auth;
  if (inferred.kind === 'inferred') return { [discriminator]: inferred.method, ...auth };
  throw invalid(
    'auth_config',
    `auth_config does not say how to sign in and its fields fit more than one method (${inferred.methods.join(', ')}); name it with auth_config.${discriminator}.`,
  );
}

function methodsOf(type: SecretManagerType): string[] {
  return type === 'aws_sm'
    ? ['accessKey', 'assumedRole', 'serviceRole']
    : type === 'azure_kv'
      ? ['entra', 'managed', 'default']
      : ['token', 'approle', 'kubernetes'];
}

function describeUse(use: SecretReferenceUse): string {
  if (use.kind === 'integration') return `integration ${use.slug}`;
  if (use.kind === 'virtual_key') return `virtual key ${use.slug}`;
  if (use.kind === 'mcp_integration') return `MCP integration ${use.slug}`;
  return `API key "${use.slug}" (${use.id}, rotation policy)`;
}

export function toSecretReferenceObject(row: SecretReferenceRow): SecretReferenceObject {
  return {
    id: row.id,
    organisation_id: row.organisation_id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    manager_type: row.manager_type,
    auth_config: maskAuthConfig(row.auth_config),
    secret_path: row.secret_path,
    secret_key: row.secret_key,
    allow_all_workspaces: row.allow_all_workspaces === 1,
    allowed_workspaces: JSON.parse(row.allowed_workspaces) as string[],
    tags: JSON.parse(row.tags) as Record<string, string>,
    status: row.status,
    created_by: row.created_by,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    object: 'secret-reference',
  };
}
