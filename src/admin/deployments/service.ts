import type { Principal } from '../../auth/principal.js';
import type { Config } from '../../config/schema.js';
import { instanceState, INSTANCE_RETENTION_MS, isLive } from '../../deployments/instance-state.js';
import { minimumGatewayVersion } from '../../deployments/registration.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { isUuid, newId, slugify } from '../../lib/ids.js';
import { updatedUsageLimits, withResetSchedule } from '../../limits/schemas.js';
import type { ConfigRepository } from '../../storage/repositories/configs.js';
import type {
  DeploymentInstanceRow,
  DeploymentRepository,
  DeploymentRow,
} from '../../storage/repositories/deployments.js';
import type { UsageCounterRepository } from '../../storage/repositories/usage-counters.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import { pageWindow } from '../shared/pagination.js';
import type {
  CreateDeploymentBody,
  DeploymentDetail,
  DeploymentInstanceObject,
  DeploymentObject,
  ListDeploymentsQuery,
  UpdateDeploymentBody,
} from './schemas.js';
import { insertUnique } from '../shared/unique-insert.js';

/**
 * The rules of deployments: slugs, the config and workspaces they name (of the caller's
 * organisation), their limits, and what their instances look like now.
 */
export function createDeploymentService(deps: {
  deployments: DeploymentRepository;
  configs: ConfigRepository;
  workspaces: WorkspaceRepository;
  usage: UsageCounterRepository;
  clock: Clock;
  settings: Pick<Config, 'min_gateway_version'>;
}) {
  const iso = (ms: number) => new Date(ms).toISOString();

  /** `:deploymentId` takes an id or a slug (the active deployment first). */
  async function find(principal: Principal, idOrSlug: string): Promise<DeploymentRow> {
    const row = isUuid(idOrSlug)
      ? await deps.deployments.findById(principal.organisationId, idOrSlug.toLowerCase())
      : await deps.deployments.findBySlug(principal.organisationId, idOrSlug);
    if (!row) throw notFound('Deployment', 'deploymentId');
    return row;
  }

  async function configIdOf(organisationId: string, given: string | null | undefined): Promise<string | null> {
    if (given === undefined || given === null) return null;
    const config = isUuid(given)
      ? await deps.configs.findById(organisationId, given.toLowerCase())
      : await deps.configs.findActiveBySlug(organisationId, given);
    if (!config || config.status !== 'active')
      throw new AppError('NOT_FOUND', `No active config ${given}.`, { param: 'config_id' });
    return config.id;
  }

  async function workspaceIdsOf(organisationId: string, given: string[] | null | undefined): Promise<string | null> {
    if (given === undefined || given === null) return null;
    const ids: string[] = [];
    for (const [index, idOrSlug] of given.entries()) {
      const workspace = await deps.workspaces.findByIdOrSlug(organisationId, idOrSlug);
      if (!workspace)
        throw new AppError('NOT_FOUND', `Workspace ${idOrSlug} not found.`, { param: `allowed_workspaces[${index}]` });
      if (!ids.includes(workspace.id)) ids.push(workspace.id);
    }
    return JSON.stringify(ids);
  }

  async function assertSlugFree(organisationId: string, slug: string): Promise<void> {
    if (await deps.deployments.findActiveBySlug(organisationId, slug))
      throw new AppError('CONFLICT', `An active deployment with slug ${slug} already exists.`, { param: 'slug' });
  }

  /** Names what a row refers to by id: its config's slug and its workspaces' slugs. */
  async function toObject(row: DeploymentRow): Promise<DeploymentObject> {
    const config = row.config_id ? await deps.configs.findById(row.organisation_id, row.config_id) : undefined;
    const workspaceIds = row.allowed_workspaces === null ? null : (JSON.parse(row.allowed_workspaces) as string[]);
    const workspaces =
      workspaceIds === null
        ? null
        : await Promise.all(
            workspaceIds.map(async (id) => ({ id, slug: (await deps.workspaces.findById(id))?.slug ?? id })),
          );
    const usageLimits = row.usage_limits === null ? null : (JSON.parse(row.usage_limits) as Record<string, unknown>);
    const lastReset = usageLimits?.last_reset_at;
    return {
      id: row.id,
      slug: row.slug,
      name: row.name,
      description: row.description,
      type: row.type,
      status: row.status,
      organisation_id: row.organisation_id,
      config_id: row.config_id,
      config_slug: config?.slug ?? null,
      rate_limits: row.rate_limits === null ? null : (JSON.parse(row.rate_limits) as DeploymentObject['rate_limits']),
      usage_limits: usageLimits,
      last_reset_at: typeof lastReset === 'string' ? lastReset : null,
      allowed_workspaces: workspaces,
      created_at: row.created_at,
      last_updated_at: row.last_updated_at,
      object: 'deployment',
    };
  }

  function toInstanceObject(row: DeploymentInstanceRow, now: number): DeploymentInstanceObject {
    return {
      id: row.id,
      status: instanceState(row, now),
      version: row.version,
      address: row.address,
      hostname: row.hostname,
      pid: row.pid,
      heartbeat_interval_ms: row.heartbeat_interval_ms,
      started_at: row.started_at,
      last_heartbeat_at: row.last_heartbeat_at,
      stopped_at: row.stopped_at,
      refusal_reason: row.refusal_reason,
      object: 'deployment_instance',
    };
  }

  const recentInstances = (deploymentId: string, now: number) =>
    deps.deployments.listInstances(deploymentId, iso(now - INSTANCE_RETENTION_MS));

  return {
    async create(principal: Principal, body: CreateDeploymentBody): Promise<DeploymentRow> {
      const slug = body.slug ?? slugify(body.name);
      await assertSlugFree(principal.organisationId, slug);
      const now = deps.clock.now();
      const row: DeploymentRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        slug,
        name: body.name,
        description: body.description ?? null,
        type: body.type,
        status: 'active',
        config_id: await configIdOf(principal.organisationId, body.config_id),
        rate_limits: body.rate_limits ? JSON.stringify(body.rate_limits) : null,
        usage_limits: body.usage_limits ? JSON.stringify(withResetSchedule(body.usage_limits, now)) : null,
        allowed_workspaces: await workspaceIdsOf(principal.organisationId, body.allowed_workspaces),
        created_at: iso(now),
        last_updated_at: iso(now),
      };
      await insertUnique(() => deps.deployments.insert(row), {
        param: 'slug',
        message: `An active deployment with slug ${slug} already exists.`,
      });
      return row;
    },

    async list(principal: Principal, query: ListDeploymentsQuery) {
      const { total, rows } = await deps.deployments.list({
        organisationId: principal.organisationId,
        ...(query.type ? { type: query.type } : {}),
        status: query.status,
        ...pageWindow(query),
      });
      return { total, data: await Promise.all(rows.map(toObject)) };
    },

    /** The deployment with its instances as they look now, and its budget's current usage. */
    async get(principal: Principal, idOrSlug: string): Promise<DeploymentDetail> {
      const row = await find(principal, idOrSlug);
      const now = deps.clock.now();
      const object = await toObject(row);
      const instances = (await recentInstances(row.id, now)).map((instance) => toInstanceObject(instance, now));
      const minimum = await minimumGatewayVersion(deps.deployments, row.organisation_id, deps.settings, now);
      const usageLimits = object.usage_limits
        ? {
            ...object.usage_limits,
            current_usage: await deps.usage.currentUsage(
              'deployment',
              row.id,
              '',
              object.last_reset_at ?? row.created_at,
            ),
          }
        : null;
      return { ...object, usage_limits: usageLimits, instances, minimum_gateway_version: minimum.version };
    },

    /** Changes apply to the running instances within seconds (at once on this one, through the change bus on PostgreSQL). */
    async update(principal: Principal, idOrSlug: string, body: UpdateDeploymentBody): Promise<DeploymentRow> {
      const row = await find(principal, idOrSlug);
      if (row.status !== 'active')
        throw invalid('deploymentId', `Deployment ${row.slug} was deleted; create a new one with its slug instead.`);
      const now = deps.clock.now();
      const patch: Partial<DeploymentRow> = { last_updated_at: iso(now) };
      if (body.name !== undefined) patch.name = body.name;
      if (body.type !== undefined) patch.type = body.type;
      if (body.description !== undefined) patch.description = body.description;
      if (body.config_id !== undefined) patch.config_id = await configIdOf(row.organisation_id, body.config_id);
      if (body.rate_limits !== undefined)
        patch.rate_limits = body.rate_limits === null ? null : JSON.stringify(body.rate_limits);
      const usageLimits = updatedUsageLimits(row.usage_limits, body, now);
      if (usageLimits !== undefined) patch.usage_limits = usageLimits;
      if (body.allowed_workspaces !== undefined)
        patch.allowed_workspaces = await workspaceIdsOf(row.organisation_id, body.allowed_workspaces);
      await deps.deployments.update(row.id, patch);
      return { ...row, ...patch };
    },

    /**
     * Deleting archives the deployment and frees its slug. Refused while instances serve it:
     * they would go on applying its rules with nobody able to change them.
     */
    async archive(principal: Principal, idOrSlug: string): Promise<DeploymentRow> {
      const row = await find(principal, idOrSlug);
      if (row.status === 'archived') return row;
      const now = deps.clock.now();
      const live = (await recentInstances(row.id, now)).filter((instance) => isLive(instance, now));
      if (live.length > 0)
        throw new AppError(
          'CONFLICT',
          `Deployment ${row.slug} has ${live.length} live instance${live.length === 1 ? '' : 's'} (${live.map((i) => i.address ?? i.hostname).join(', ')}); stop them first.`,
        );
      await deps.deployments.update(row.id, { status: 'archived', last_updated_at: iso(now) });
      return { ...row, status: 'archived' };
    },
  };
}

export type DeploymentService = ReturnType<typeof createDeploymentService>;
