import type { Config } from '../config/schema.js';
import type { Clock } from '../lib/clock.js';
import type { Db } from '../storage/database.js';
import type { Logger } from '../telemetry/logger.js';
import { createDeliveryWorker, type DeliveryWorker } from './delivery-worker.js';
import { createNotificationOutbox, type NotificationOutbox } from './outbox.js';
import { createSmtpTransport } from './smtp-transport.js';
import type { MailTransport } from './transport.js';

export * as alertMessages from './alert-messages.js';
export {
  createDeliveryWorker,
  type DeliveryWorker,
  type DeliveryWorkerOptions,
  type RunResult,
} from './delivery-worker.js';
export {
  createNotificationOutbox,
  type EnqueueInput,
  type NotificationKind,
  type NotificationOutbox,
} from './outbox.js';
export { createSmtpTransport, MailSendError, type SmtpSettings } from './smtp-transport.js';
export { createMemoryTransport, type MailTransport, type MemoryTransport, type OutgoingMail } from './transport.js';

/** How often the worker looks for due alerts. */
export const DELIVERY_INTERVAL_MS = 5_000;

export interface Notifications {
  outbox: NotificationOutbox;
  /** Null when no SMTP server is configured: alerts then wait in the outbox. */
  worker: DeliveryWorker | null;
  /** Stops the worker (waiting for a send in progress) and closes the SMTP transport. */
  stop(): Promise<void>;
}

/**
 * The one call the server makes at start-up: the outbox for alert producers, and, when
 * `smtp_host` is set, the delivery worker running every few seconds. Call `stop()` on shutdown
 * before the database is closed.
 */
export function startNotifications(deps: {
  config: Config;
  db: Db;
  clock: Clock;
  logger: Logger;
  /** Replaces the SMTP transport (tests). */
  transport?: MailTransport;
  intervalMs?: number;
}): Notifications {
  const logger = deps.logger.child({ component: 'notifications' });
  const outbox = createNotificationOutbox({ db: deps.db, clock: deps.clock, logger });
  const { config } = deps;
  let transport = deps.transport;
  if (!transport) {
    if (!config.smtp_host) {
      logger.info('smtp_host is not set: alert e-mails are kept in the outbox (notifications table) and not sent');
      return { outbox, worker: null, stop: async () => {} };
    }
    transport = createSmtpTransport({ ...config, smtp_host: config.smtp_host });
    logger.info(
      { smtp_host: config.smtp_host, smtp_port: config.smtp_port, smtp_secure: config.smtp_secure },
      'alert e-mail delivery started',
    );
  }

  const worker = createDeliveryWorker({ db: deps.db, clock: deps.clock, logger, transport });
  worker.start(deps.intervalMs ?? DELIVERY_INTERVAL_MS);

  let stopping: Promise<void> | null = null;
  return {
    outbox,
    worker,
    stop: () => (stopping ??= worker.stop().finally(() => transport.close())),
  };
}
