import { hostname } from 'node:os';
import type { Config } from '../config/schema.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { VERSION } from '../lib/version.js';
import type {
  DeploymentInstanceRow,
  DeploymentRepository,
  DeploymentRow,
} from '../storage/repositories/deployments.js';
import type { Logger } from '../telemetry/logger.js';
import { INSTANCE_RETENTION_MS, isLive } from './instance-state.js';
import { compareVersions, isOlderThan } from './versions.js';

/** Why an instance may not join its deployment; `exitCode` is what `svcgw serve` exits with. */
export class DeploymentRefusedError extends Error {
  override readonly name = 'DeploymentRefusedError';
  constructor(
    message: string,
    /** 2: the settings name no usable deployment; 1: the control plane refused this instance. */
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}

export interface RegisteredInstance {
  id: string;
  deploymentId: string;
  /** One heartbeat, then pruning of long-silent instances; the timer calls it, and tests do. */
  heartbeat(): Promise<void>;
  /** Heartbeats every `deployment_heartbeat_interval_ms`; the timer does not keep the process alive. */
  start(): void;
  /** Stops the heartbeat and records a clean stop; call before the database closes. */
  stop(): Promise<void>;
}

export interface DeploymentJoin {
  deployment: DeploymentRow;
  /** The version this instance reports (its own, or `deployment_reported_version`). */
  version: string;
  /** Records the instance, listening at `address`; call once it listens. */
  register(address: string): Promise<RegisteredInstance>;
}

type JoinSettings = Pick<
  Config,
  'deployment' | 'min_gateway_version' | 'deployment_reported_version' | 'deployment_heartbeat_interval_ms'
>;

/**
 * The checks of `svcgw serve --deployment <slug>` before it listens: the deployment must exist,
 * and this instance's version must be at least the control plane's minimum gateway version,
 * which is the highest `min_gateway_version` among this instance and the live instances of
 * the organisation (a newer release running anywhere raises the floor for everyone). A refused
 * attempt is recorded with the deployment's instances, so that operators see it there too.
 * Null when no deployment is set.
 */
export async function joinDeployment(deps: {
  repo: DeploymentRepository;
  clock: Clock;
  logger: Logger;
  settings: JoinSettings;
}): Promise<DeploymentJoin | null> {
  const slug = deps.settings.deployment;
  if (slug === undefined) return null;
  const matches = await deps.repo.listActiveBySlug(slug);
  if (matches.length === 0)
    throw new DeploymentRefusedError(
      `deployment ${slug} does not exist: create it first (svcgw deployments create --slug ${slug} --name … --type production, or POST /v1/deployments), then start this instance again`,
      2,
    );
  if (matches.length > 1)
    throw new DeploymentRefusedError(
      `deployment ${slug} exists in ${matches.length} organisations of this database; an instance can join only one`,
      2,
    );
  const deployment = matches[0]!;
  const version = deps.settings.deployment_reported_version ?? VERSION;
  const iso = (ms: number) => new Date(ms).toISOString();
  const logger = deps.logger.child({ component: 'deployment', deployment: slug });
  const base = (now: number): Omit<DeploymentInstanceRow, 'id' | 'status' | 'address' | 'refusal_reason'> => ({
    deployment_id: deployment.id,
    organisation_id: deployment.organisation_id,
    version,
    min_gateway_version: deps.settings.min_gateway_version,
    hostname: hostname(),
    pid: process.pid,
    heartbeat_interval_ms: deps.settings.deployment_heartbeat_interval_ms,
    started_at: iso(now),
    last_heartbeat_at: iso(now),
    stopped_at: null,
  });

  const now = deps.clock.now();
  const floor = await minimumGatewayVersion(deps.repo, deployment.organisation_id, deps.settings, now);
  if (isOlderThan(version, floor.version)) {
    const message = `svcgw ${version} cannot join deployment ${slug}: the control plane's minimum gateway version is ${floor.version} (${floor.source}); upgrade this instance to ${floor.version} or later`;
    await deps.repo.insertInstance({
      ...base(now),
      id: newId(),
      status: 'refused',
      address: null,
      refusal_reason: message,
    });
    logger.error({ version, minimum: floor.version }, message);
    throw new DeploymentRefusedError(message, 1);
  }

  return {
    deployment,
    version,
    async register(address) {
      const id = newId();
      const row: DeploymentInstanceRow = {
        ...base(deps.clock.now()),
        id,
        status: 'active',
        address,
        refusal_reason: null,
      };
      await deps.repo.insertInstance(row);
      logger.info({ instance: id, version, address }, `registered in deployment ${slug}`);
      return heartbeats(deps, row, logger);
    },
  };
}

/** The control plane's minimum gateway version now, and where it comes from (for the refusal message). */
export async function minimumGatewayVersion(
  repo: DeploymentRepository,
  organisationId: string,
  settings: Pick<Config, 'min_gateway_version'>,
  now: number,
): Promise<{ version: string; source: string }> {
  let floor = { version: settings.min_gateway_version, source: "this instance's min_gateway_version setting" };
  const recent = await repo.listActiveInstances(new Date(now - INSTANCE_RETENTION_MS).toISOString());
  for (const row of recent) {
    if (row.organisation_id !== organisationId || !isLive(row, now)) continue;
    if (compareVersions(row.min_gateway_version, floor.version) > 0)
      floor = {
        version: row.min_gateway_version,
        source: `required by the running instance ${row.id} at ${row.address ?? row.hostname}, svcgw ${row.version}`,
      };
  }
  return floor;
}

function heartbeats(
  deps: { repo: DeploymentRepository; clock: Clock; settings: JoinSettings },
  registered: DeploymentInstanceRow,
  logger: Logger,
): RegisteredInstance {
  const iso = (ms: number) => new Date(ms).toISOString();
  let timer: NodeJS.Timeout | null = null;
  let chain: Promise<void> = Promise.resolve();
  let stopped = false;

  async function beat(): Promise<void> {
    const now = deps.clock.now();
    const found = await deps.repo.heartbeat(registered.id, iso(now));
    // Pruned after a long pause (a suspended VM): register again under the same id.
    if (!found && !stopped) {
      await deps.repo.insertInstance({ ...registered, last_heartbeat_at: iso(now) });
      logger.warn(
        { instance: registered.id },
        'instance record was gone (pruned after a long silence); registered again',
      );
    }
    await deps.repo.pruneInstances(iso(now - INSTANCE_RETENTION_MS));
  }

  const heartbeat = () => {
    const run = chain.then(beat);
    chain = run.catch((error: unknown) => logger.error({ err: error }, 'deployment heartbeat failed'));
    return run;
  };

  return {
    id: registered.id,
    deploymentId: registered.deployment_id,
    heartbeat,
    start() {
      timer = setInterval(
        () => void heartbeat().catch(() => undefined),
        deps.settings.deployment_heartbeat_interval_ms,
      );
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      stopped = true;
      await chain;
      try {
        await deps.repo.markStopped(registered.id, iso(deps.clock.now()));
      } catch (error) {
        logger.warn({ err: error }, 'could not record the clean stop; the instance will be shown gone');
      }
    },
  };
}
