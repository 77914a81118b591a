import type { Config } from '../config/schema.js';
import { createChangeBus, type ChangeBus } from '../storage/change-bus.js';
import { engineOf, StorageRefusedError, type Db } from '../storage/database.js';
import { createPostgresSession, InstanceLockTaken } from '../storage/postgres/instance-session.js';
import type { Logger } from '../telemetry/logger.js';

/** Why an instance refuses to start beside others whose limits are counted differently, and the fix. */
export const REFUSED_TOPOLOGY = {
  exclusive:
    'another svcgw instance is running on this PostgreSQL database, and this one has no redis_url: each instance would count rate limits and budgets for itself. Set redis_url (SVCGW_REDIS_URL) to one shared Redis on every instance, or run a single instance.',
  shared:
    'an svcgw instance without redis_url is running on this PostgreSQL database: it counts rate limits and budgets for itself, so limits would not hold. Give it the same redis_url (SVCGW_REDIS_URL) and restart it, then start this one.',
} as const;

/**
 * The change bus of an instance. On PostgreSQL it listens on its own connection (LISTEN/NOTIFY)
 * and holds the instance lock, which refuses a topology whose limits cannot be exact; on SQLite
 * (one box) changes stay in the process and other processes on the file see them when their
 * cache entries expire.
 */
export async function startChangeBus(deps: {
  config: Pick<Config, 'database_url' | 'redis_url'>;
  db: Db;
  logger: Logger;
}): Promise<ChangeBus> {
  const url = deps.config.database_url;
  if (!url || engineOf(deps.db) !== 'postgres') return createChangeBus();
  const logger = deps.logger.child({ component: 'changes' });
  const instanceLock = deps.config.redis_url ? 'shared' : 'exclusive';
  const bus = createChangeBus({
    transport: createPostgresSession({ url, db: deps.db, instanceLock, logger }),
    onSendError: (error) =>
      logger.warn(
        { err: error },
        'a change could not be sent to the other instances; they see it when their caches expire',
      ),
  });
  try {
    await bus.start();
  } catch (error) {
    if (error instanceof InstanceLockTaken) throw new StorageRefusedError(REFUSED_TOPOLOGY[instanceLock]);
    throw error;
  }
  return bus;
}
