import type { FastifyInstance } from 'fastify';
import type { Dispatcher } from 'undici';
import { bootstrap, type BootstrapResult } from '../bootstrap/bootstrap.js';
import type { Config } from '../config/schema.js';
import { systemClock, type Clock } from '../lib/clock.js';
import { migrateToLatest, openSqlite, type Db } from '../storage/database.js';
import { createLogger, type Logger } from '../telemetry/logger.js';
import { buildApp, type App } from './build-app.js';

export interface RunningServer extends App {
  url: string;
  db: Db;
  logger: Logger;
  bootstrap: BootstrapResult;
  /** Stops accepting, lets in-flight requests finish (up to the shutdown time-out), flushes, closes the database. */
  close(): Promise<void>;
}

/** Opens storage, migrates, bootstraps on the first start, and listens. */
export async function startServer(options: { config: Config; clock?: Clock; logger?: Logger; upstreamDispatcher?: Dispatcher }): Promise<RunningServer> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger({ level: config.log_level });

  const db = openSqlite(config.data_dir);
  const applied = await migrateToLatest(db);
  if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
  const boot = await bootstrap(db, { clock, ownerEmail: config.bootstrap_owner_email, adminKey: config.bootstrap_admin_key });

  const built = await buildApp({ config, db, logger, clock, ...(options.upstreamDispatcher ? { upstreamDispatcher: options.upstreamDispatcher } : {}) });
  const address = await built.app.listen({ host: config.host, port: config.port });
  logger.info({ url: address, data_dir: config.data_dir }, 'svcgw listening');

  let closing: Promise<void> | null = null;
  return {
    ...built,
    url: address,
    db,
    logger,
    bootstrap: boot,
    close: () => (closing ??= shutdown(built.app, db, config.shutdown_timeout_ms)),
  };
}

async function shutdown(app: FastifyInstance, db: Db, timeoutMs: number): Promise<void> {
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
    await db.destroy();
  }
}
