import type pg from 'pg';
import { pgDriver } from './driver.js';
import { sql } from 'kysely';
import type { ChangeTransport } from '../change-bus.js';
import type { Db } from '../database.js';
import { outsideRequestTransactions } from '../request-transaction.js';

/** The channel every instance on one database listens on (channels are per database). */
export const CHANGE_CHANNEL = 'svcgw_changes';
/**
 * Held for the life of every instance: exclusively by one that counts limits in process (no
 * redis_url), so that no other instance can start beside it; shared by instances that count in
 * Redis, so that any number of them can, but none without Redis. (Other advisory locks:
 * migrations 7_310_452_118, rollups 7_310_452_119, jobs the two-key space of job-lock.ts.)
 */
export const INSTANCE_LOCK = 7_310_452_131;

/** exclusive: limits counted in this process; shared: counted in Redis. */
export type InstanceLockMode = 'exclusive' | 'shared';

interface SessionLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** The instance lock is held in a way that excludes this instance's mode. */
export class InstanceLockTaken extends Error {
  override readonly name = 'InstanceLockTaken';
}

const RECONNECT_MAX_MS = 5_000;

/**
 * An instance's own connection to PostgreSQL, outside the pool: it LISTENs for changes made by
 * every instance, and holds the instance lock (`INSTANCE_LOCK`) for the life of the process. A lost connection is opened again (backing off up to 5 s); since
 * notifications sent meanwhile are lost, `onResume` then tells the caches to drop everything.
 * Messages are sent through the pool, so that sending does not depend on this connection.
 */
export function createPostgresSession(options: {
  url: string;
  db: Db;
  instanceLock: InstanceLockMode;
  logger: SessionLogger;
  reconnectBaseMs?: number;
}): ChangeTransport & {
  /** The server process of the current connection, for tests that cut it. */ backendPid(): number | null;
} {
  const { logger } = options;
  let client: pg.Client | null = null;
  let closed = false;
  let timer: NodeJS.Timeout | null = null;
  let receive: (message: string) => void = () => undefined;
  let onResume: () => void = () => undefined;

  async function connect(required: boolean): Promise<pg.Client> {
    const next = new (pgDriver().Client)({
      connectionString: options.url,
      application_name: 'svcgw-changes',
      keepAlive: true,
    });
    next.on('error', (error) => lost(next, error));
    next.on('end', () => lost(next));
    next.on('notification', (note) => {
      if (note.channel === CHANGE_CHANNEL && note.payload) receive(note.payload);
    });
    try {
      await next.connect();
      const lock =
        options.instanceLock === 'exclusive'
          ? 'select pg_try_advisory_lock($1) as ok'
          : 'select pg_try_advisory_lock_shared($1) as ok';
      const { rows } = await next.query<{ ok: boolean }>(lock, [INSTANCE_LOCK]);
      if (!rows[0]?.ok) {
        if (required) throw new InstanceLockTaken(`the instance lock is taken (${options.instanceLock} wanted)`);
        logger.error(
          { instance_lock: options.instanceLock },
          'while this instance was disconnected from PostgreSQL, an instance started whose limits are counted differently (with or without redis_url): limits may be counted per instance; give every instance the same redis_url and restart them',
        );
      }
      await next.query(`LISTEN ${CHANGE_CHANNEL}`);
    } catch (error) {
      await next.end().catch(() => undefined);
      throw error;
    }
    return next;
  }

  function lost(which: pg.Client, error?: Error): void {
    if (closed || client !== which) return;
    client = null;
    logger.warn(
      { err: error },
      'lost the PostgreSQL connection for change notifications; caches fall back to their time-outs until it is back',
    );
    void which.end().catch(() => undefined);
    reconnect(0);
  }

  function reconnect(attempt: number): void {
    if (closed) return;
    const delay = Math.min(RECONNECT_MAX_MS, (options.reconnectBaseMs ?? 100) * 2 ** attempt);
    timer = setTimeout(() => {
      timer = null;
      connect(false).then(
        (next) => {
          if (closed) return void next.end().catch(() => undefined);
          client = next;
          logger.info({}, 'change notifications resumed; caches cleared');
          onResume();
        },
        (error: unknown) => {
          if (attempt === 0) logger.warn({ err: error }, 'change notifications: reconnecting');
          reconnect(attempt + 1);
        },
      );
    }, delay);
    timer.unref();
  }

  return {
    async start(onMessage, resume) {
      receive = onMessage;
      onResume = resume;
      client = await connect(true);
    },
    async send(message) {
      await sql`select pg_notify(${CHANGE_CHANNEL}, ${message})`.execute(outsideRequestTransactions(options.db));
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      const current = client;
      client = null;
      await current?.end().catch(() => undefined);
    },
    backendPid: () => (client as unknown as { processID?: number } | null)?.processID ?? null,
  };
}
