import { randomUUID } from 'node:crypto';
import { isoAt, type Clock } from '../lib/clock.js';
import type { Db } from '../storage/database.js';
import { createNotificationRepository, type NotificationRow } from '../storage/repositories/notifications.js';
import type { Logger } from '../telemetry/logger.js';
import { runExclusive } from '../storage/job-lock.js';
import type { MailTransport } from './transport.js';

export interface DeliveryWorkerOptions {
  db: Db;
  clock: Clock;
  logger: Logger;
  transport: MailTransport;
  /** Rows claimed per run. */
  batchSize?: number;
  /** Attempts before a row becomes `failed` for good. */
  maxAttempts?: number;
  /** Delay after the first failure; doubles with each further one, up to `retryMaxMs`. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** A row in `sending` for longer than this was abandoned by a crashed worker. */
  staleAfterMs?: number;
  /** Source of jitter in [0, 1); tests pin it. */
  random?: () => number;
}

export interface RunResult {
  /** Messages the mail server accepted in this run. */
  sent: number;
  /** Send attempts that failed in this run (retried later, or failed for good). */
  failed: number;
}

export const DELIVERY_DEFAULTS = {
  batchSize: 20,
  maxAttempts: 8,
  retryBaseMs: 60_000,
  retryMaxMs: 60 * 60_000,
  // Well beyond the SMTP transport's own time-outs, so a slow send is never taken for a crash.
  staleAfterMs: 10 * 60_000,
} as const;

/**
 * Delay before the next attempt after `attempts` failures: exponential, capped, with "equal
 * jitter" (half fixed, half random) so that instances that failed together do not retry together.
 */
export function retryDelayMs(attempts: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 500);

/**
 * Delivers the outbox. Each run first returns abandoned `sending` rows to pending, then takes
 * due pending rows one by one with a conditional UPDATE (pending → sending), so that of several
 * workers (in one process or several instances on one database) exactly one sends each row.
 * A crash between the server accepting a message and the row being marked sent is the one
 * case in which an alert is sent twice; its Message-ID stays the same.
 */
export function createDeliveryWorker(options: DeliveryWorkerOptions) {
  const { clock, logger, transport } = options;
  const repo = createNotificationRepository(options.db);
  const batchSize = options.batchSize ?? DELIVERY_DEFAULTS.batchSize;
  const maxAttempts = options.maxAttempts ?? DELIVERY_DEFAULTS.maxAttempts;
  const retryBaseMs = options.retryBaseMs ?? DELIVERY_DEFAULTS.retryBaseMs;
  const retryMaxMs = options.retryMaxMs ?? DELIVERY_DEFAULTS.retryMaxMs;
  const staleAfterMs = options.staleAfterMs ?? DELIVERY_DEFAULTS.staleAfterMs;
  const random = options.random ?? Math.random;

  let inFlight: Promise<RunResult> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let stopped = true;
  let intervalMs = 5_000;

  async function deliver(row: NotificationRow, token: string): Promise<boolean> {
    const attempts = row.attempts + 1;
    let rejected: string[];
    try {
      const recipients = JSON.parse(row.recipients) as string[];
      if (recipients.length === 0) throw new Error('no recipients');
      ({ rejected } = await transport.send({
        messageId: `<${row.id}@svcgw>`,
        to: recipients,
        subject: row.subject,
        text: row.body_text,
        headers: { 'X-Svcgw-Notification-Kind': row.kind },
      }));
    } catch (error) {
      const lastError = errorText(error);
      const giveUp = attempts >= maxAttempts;
      const nextAttemptAt = isoAt(clock.now() + (giveUp ? 0 : retryDelayMs(attempts, retryBaseMs, retryMaxMs, random)));
      await repo.markAttemptFailed(row.id, token, {
        status: giveUp ? 'failed' : 'pending',
        attempts,
        nextAttemptAt,
        lastError,
      });
      const fields = { notificationId: row.id, kind: row.kind, attempts, maxAttempts, error: lastError };
      if (giveUp) logger.error(fields, 'alert e-mail failed; giving up');
      else logger.warn({ ...fields, nextAttemptAt }, 'alert e-mail failed; will retry');
      return false;
    }
    // Outside the try: a database error here must not be taken for a failed send (and retried).
    if (rejected.length > 0)
      logger.warn(
        { notificationId: row.id, kind: row.kind, rejected: rejected.length },
        'mail server refused some alert recipients',
      );
    if (!(await repo.markSent(row.id, token, isoAt(clock.now()), attempts))) {
      logger.warn({ notificationId: row.id }, 'alert sent after its claim was recovered by another worker');
    }
    return true;
  }

  /** One instance delivers at a time (storage/job-lock.ts); each row's claim is atomic anyway. */
  async function run(): Promise<RunResult> {
    const done = await runExclusive(options.db, 'alert-delivery', deliverDue);
    return done.ran ? done.value : { sent: 0, failed: 0 };
  }

  async function deliverDue(): Promise<RunResult> {
    const now = clock.now();
    const recovered = await repo.recoverStale(isoAt(now - staleAfterMs), isoAt(now), maxAttempts);
    if (recovered.pending + recovered.failed > 0)
      logger.warn(recovered, 'recovered alert e-mails abandoned in sending');

    const result: RunResult = { sent: 0, failed: 0 };
    for (const row of await repo.listDue(isoAt(now), batchSize)) {
      const token = randomUUID();
      if (!(await repo.claim(row.id, token, isoAt(clock.now())))) continue;
      if (await deliver(row, token)) result.sent += 1;
      else result.failed += 1;
    }
    return result;
  }

  /** One pass over the due rows; a call made while a pass is running waits for it, then runs. */
  async function runOnce(): Promise<RunResult> {
    while (inFlight) await inFlight.catch(() => undefined);
    const current = run();
    inFlight = current;
    try {
      return await current;
    } finally {
      if (inFlight === current) inFlight = null;
    }
  }

  async function runScheduled(): Promise<void> {
    while (inFlight) await inFlight.catch(() => undefined);
    if (!stopped) await runOnce();
  }

  function schedule(delayMs: number): void {
    timer = setTimeout(() => {
      timer = null;
      void runScheduled()
        .catch((error: unknown) => logger.error({ error: errorText(error) }, 'alert delivery run failed'))
        .finally(() => {
          if (!stopped) schedule(intervalMs);
        });
    }, delayMs);
    timer.unref();
  }

  return {
    runOnce,
    /** Runs now, then `intervalMs` after each run ends (runs never overlap); never holds the process open. */
    start(everyMs: number): void {
      if (!stopped) return;
      stopped = false;
      intervalMs = everyMs;
      schedule(0);
    },
    /** Stops the schedule and waits for a run in progress, so that no row is left in `sending`. */
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      while (inFlight) await inFlight.catch(() => undefined);
    },
  };
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;
