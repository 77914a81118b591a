import type { FastifyInstance } from 'fastify';
import type { Dispatcher } from 'undici';
import { bootstrap, type BootstrapResult } from '../bootstrap/bootstrap.js';
import type { Config } from '../config/schema.js';
import { systemClock, type Clock } from '../lib/clock.js';
import {
  CACHE_DATABASE_FILE,
  engineOf,
  migrateToLatest,
  openDatabase,
  openSqlite,
  rawSqlite,
  type Db,
} from '../storage/database.js';
import { startWalCheckpoints, type WalCheckpoints } from '../storage/wal-checkpoints.js';
import { createLogger, prettyFor, type Logger } from '../telemetry/logger.js';
import { setRegexWorkerLogger } from '../guardrails/safe-regex.js';
import { startChangeBus } from './instance-bus.js';
import { buildApp, type App } from './build-app.js';
import { holdStartupAdmin, type StartupAdmin } from './startup-admin.js';
import type { AlertSink } from '../limits/usage-recorder.js';
import { startNotifications, type MailTransport, type Notifications } from '../notifications/index.js';
import { joinDeployment, type RegisteredInstance } from '../deployments/registration.js';
import { createDeploymentRepository } from '../storage/repositories/deployments.js';
import {
  createKeyLifecycleWorker,
  KEY_LIFECYCLE_INTERVAL_MS,
  type KeyLifecycleWorker,
} from '../workers/key-lifecycle-worker.js';

export interface RunningServer extends App {
  url: string;
  db: Db;
  logger: Logger;
  bootstrap: BootstrapResult;
  notifications: Notifications;
  /** API key expiry, scheduled rotations and their notices (every 30 s; tests call `runOnce`). */
  keyLifecycle: KeyLifecycleWorker;
  /** This instance in its deployment (`deployment` setting), heartbeating; null when it joined none. */
  deploymentInstance: RegisteredInstance | null;
  /**
   * The WAL checkpoints of the SQLite file the gateway writes (the main one, or on PostgreSQL the
   * response cache's), on a worker thread once it writes much; null with `sqlite_checkpoint_worker` off.
   */
  walCheckpoints: WalCheckpoints | null;
  /** A key for the server's own admin requests as the owner (the startup file); see startup-admin.ts. */
  holdStartupAdmin(via: string): Promise<StartupAdmin>;
  /** Stops accepting, lets in-flight requests finish (up to the shutdown time-out), flushes, closes the database. */
  close(): Promise<void>;
}

/** Opens storage, migrates, bootstraps on the first start, and listens. */
export async function startServer(options: {
  config: Config;
  clock?: Clock;
  logger?: Logger;
  upstreamDispatcher?: Dispatcher;
  mailTransport?: MailTransport;
}): Promise<RunningServer> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger({ level: config.log_level, pretty: prettyFor(config.log_format) });
  // The regexMatch worker's failures (a worker that dies or does not start) go to this log.
  setRegexWorkerLogger(logger);

  const db = openDatabase(config, {
    onPoolError: (error) => logger.error({ err: error }, 'a PostgreSQL connection of the pool failed'),
  });
  // The response cache stays on this instance, in a SQLite file of its own, when storage is PostgreSQL.
  let cacheDb: Db | undefined;
  try {
    const applied = await migrateToLatest(db);
    if (applied.length > 0) logger.info({ migrations: applied, engine: engineOf(db) }, 'database migrated');
    if (engineOf(db) === 'postgres') {
      cacheDb = openSqlite(config.data_dir, CACHE_DATABASE_FILE, config.sqlite_cache_mb);
      await migrateToLatest(cacheDb);
    }
  } catch (error) {
    await cacheDb?.destroy();
    await db.destroy();
    throw error;
  }
  let changes: Awaited<ReturnType<typeof startChangeBus>>;
  try {
    changes = await startChangeBus({ config, db, logger });
  } catch (error) {
    await cacheDb?.destroy();
    await db.destroy();
    throw error;
  }
  const boot = await bootstrap(db, {
    clock,
    ownerEmail: config.bootstrap_owner_email,
    adminKey: config.bootstrap_admin_key,
  });
  // Before listening: an unknown deployment or too old a version stops the start (DeploymentRefusedError).
  const join = await joinDeployment({ repo: createDeploymentRepository(db), clock, logger, settings: config }).catch(
    async (error: unknown) => {
      await changes.close();
      await cacheDb?.destroy();
      await db.destroy();
      throw error;
    },
  );

  const notifications = startNotifications({
    config,
    db,
    clock,
    logger,
    ...(options.mailTransport ? { transport: options.mailTransport } : {}),
  });
  const alerts: AlertSink = {
    raise: async ({ organisationId, workspaceId, ...message }) =>
      void (await notifications.outbox.enqueue({ organisationId, workspaceId, ...message })),
  };
  const built = await buildApp({
    config,
    db,
    logger,
    clock,
    alerts,
    changes,
    ...(cacheDb ? { cacheDb } : {}),
    ...(options.upstreamDispatcher ? { upstreamDispatcher: options.upstreamDispatcher } : {}),
    ...(join ? { deploymentId: join.deployment.id } : {}),
  });
  const address = await built.app.listen({ host: config.host, port: config.port });
  // At any level but `silent`: a supervisor or script reads the address (`--port 0`) from this line.
  listeningLogger(logger).info(
    {
      url: address,
      data_dir: config.data_dir,
      pid: process.pid,
      ...(join ? { deployment: join.deployment.slug } : {}),
    },
    'svcgw listening',
  );
  let deploymentInstance: RegisteredInstance | null = null;
  // The SQLite file the gateway writes (the main one, or on PostgreSQL the local cache's).
  const checkpoints = config.sqlite_checkpoint_worker ? walCheckpointsFor(cacheDb ?? db, logger) : null;
  const closeStorage = async () => {
    await deploymentInstance?.stop();
    await changes.close();
    await checkpoints?.stop();
    await db.destroy();
    await cacheDb?.destroy();
  };
  if (join) {
    try {
      deploymentInstance = await join.register(config.advertise_url ?? address);
    } catch (error) {
      await shutdown(built.app, closeStorage, config.shutdown_timeout_ms, notifications);
      throw error;
    }
    deploymentInstance.start();
  }
  const keyLifecycle = createKeyLifecycleWorker({
    db,
    clock,
    logger,
    verifier: built.keys,
    enqueue: (input) => notifications.outbox.enqueue(input),
    rotationWriter: built.rotationWriter,
  });
  keyLifecycle.start(KEY_LIFECYCLE_INTERVAL_MS);
  built.observability.start();
  built.mcp.sync.start();

  let closing: Promise<void> | null = null;
  return {
    ...built,
    url: address,
    db,
    logger,
    bootstrap: boot,
    notifications,
    keyLifecycle,
    deploymentInstance,
    walCheckpoints: checkpoints,
    holdStartupAdmin: (via) => holdStartupAdmin(db, built.keys, via),
    close: () =>
      (closing ??= keyLifecycle
        .stop()
        .then(() => shutdown(built.app, closeStorage, config.shutdown_timeout_ms, notifications))),
  };
}

/** WAL checkpoints off the event loop for a SQLite database (null for PostgreSQL). */
function walCheckpointsFor(db: Db, logger: Logger): WalCheckpoints | null {
  const sqlite = rawSqlite(db);
  if (!sqlite) return null;
  return startWalCheckpoints(sqlite, { log: (level, fields, message) => logger[level](fields, message) });
}

/**
 * The logger for the `svcgw listening` line: `logger` itself when it writes info lines or is
 * silenced (`silent`), else a child of it at `info`, so that the line is written at `warn`,
 * `error` or `fatal` too.
 */
function listeningLogger(logger: Logger): Logger {
  if (logger.level === 'silent' || logger.isLevelEnabled('info')) return logger;
  return logger.child({}, { level: 'info' });
}

async function shutdown(
  app: FastifyInstance,
  closeStorage: () => Promise<void>,
  timeoutMs: number,
  notifications: Notifications,
): Promise<void> {
  // In-flight requests get the time-out to finish; after that their connections are cut.
  const timer = setTimeout(() => app.server.closeAllConnections(), timeoutMs);
  timer.unref();
  // A keep-alive connection whose response (a long stream) ends after close() began would
  // otherwise stay open until its keep-alive time-out: close connections as they go idle.
  const sweeper = setInterval(() => app.server.closeIdleConnections(), 50);
  sweeper.unref();
  try {
    await app.close();
  } finally {
    clearTimeout(timer);
    clearInterval(sweeper);
    await notifications.stop();
    await closeStorage();
  }
}
