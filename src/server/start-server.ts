import type { FastifyInstance } from 'fastify';
import type { Dispatcher } from 'undici';
import { bootstrap, type BootstrapResult } from '../bootstrap/bootstrap.js';
import type { Config } from '../config/schema.js';
import { systemClock, type Clock } from '../lib/clock.js';
import { migrateToLatest, openSqlite, StorageRefusedError, type Db } from '../storage/database.js';
import { createLogger, prettyFor, type Logger } from '../telemetry/logger.js';
import { buildApp, type App } from './build-app.js';
import { holdStartupAdmin, type StartupAdmin } from './startup-admin.js';
import type { AlertSink } from '../limits/usage-recorder.js';
import { startNotifications, type MailTransport, type Notifications } from '../notifications/index.js';
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

  if (config.database_url)
    throw new StorageRefusedError(
      "database_url (PostgreSQL) is not served yet: the gateway's request logs and analytics need SQLite",
    );
  const db = openSqlite(config.data_dir);
  const applied = await migrateToLatest(db);
  if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
  const boot = await bootstrap(db, {
    clock,
    ownerEmail: config.bootstrap_owner_email,
    adminKey: config.bootstrap_admin_key,
  });

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
    ...(options.upstreamDispatcher ? { upstreamDispatcher: options.upstreamDispatcher } : {}),
  });
  const address = await built.app.listen({ host: config.host, port: config.port });
  logger.info({ url: address, data_dir: config.data_dir, pid: process.pid }, 'svcgw listening');
  const keyLifecycle = createKeyLifecycleWorker({
    db,
    clock,
    logger,
    verifier: built.keys,
    enqueue: (input) => notifications.outbox.enqueue(input),
  });
  keyLifecycle.start(KEY_LIFECYCLE_INTERVAL_MS);
  built.observability.start();

  let closing: Promise<void> | null = null;
  return {
    ...built,
    url: address,
    db,
    logger,
    bootstrap: boot,
    notifications,
    keyLifecycle,
    holdStartupAdmin: (via) => holdStartupAdmin(db, built.keys, via),
    close: () =>
      (closing ??= keyLifecycle.stop().then(() => shutdown(built.app, db, config.shutdown_timeout_ms, notifications))),
  };
}

async function shutdown(app: FastifyInstance, db: Db, timeoutMs: number, notifications: Notifications): Promise<void> {
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
    await db.destroy();
  }
}
