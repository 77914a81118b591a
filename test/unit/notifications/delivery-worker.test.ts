import { describe, expect, it } from 'vitest';
import { createDeliveryWorker, retryDelayMs } from '../../../src/notifications/delivery-worker.js';
import { createNotificationOutbox } from '../../../src/notifications/outbox.js';
import { createMemoryTransport } from '../../../src/notifications/transport.js';
import { createNotificationRepository } from '../../../src/storage/repositories/notifications.js';
import { captureLogger, openNotificationsDb, OWNER_EMAIL } from './harness.js';

const MINUTE = 60_000;

async function setup(options: { maxAttempts?: number; random?: () => number } = {}) {
  const env = await openNotificationsDb();
  const { logger, lines } = captureLogger();
  const transport = createMemoryTransport();
  const outbox = createNotificationOutbox({ db: env.db, clock: env.clock, logger });
  const worker = createDeliveryWorker({
    db: env.db,
    clock: env.clock,
    logger,
    transport,
    random: options.random ?? (() => 1),
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
  });
  const enqueue = (dedupeKey: string) =>
    outbox.enqueue({
      organisationId: env.organisationId,
      kind: 'api_key.expiring',
      dedupeKey,
      subject: `Subject ${dedupeKey}`,
      text: `Text ${dedupeKey}`,
    });
  const row = (dedupeKey: string) =>
    env.db.selectFrom('notifications').selectAll().where('dedupe_key', '=', dedupeKey).executeTakeFirstOrThrow();
  return { ...env, logger, lines, transport, outbox, worker, enqueue, row };
}

describe('delivery worker', () => {
  it('sends a pending alert once and marks it sent', async () => {
    const env = await setup();
    await env.enqueue('a');
    expect(await env.worker.runOnce()).toEqual({ sent: 1, failed: 0 });
    expect(env.transport.sent).toHaveLength(1);
    expect(env.transport.sent[0]).toMatchObject({
      to: [OWNER_EMAIL],
      subject: 'Subject a',
      text: 'Text a',
      headers: { 'X-Svcgw-Notification-Kind': 'api_key.expiring' },
    });
    expect(await env.row('a')).toMatchObject({
      status: 'sent',
      attempts: 1,
      sent_at: new Date(env.clock.now()).toISOString(),
      claim_token: null,
      last_error: null,
    });
    expect(await env.worker.runOnce()).toEqual({ sent: 0, failed: 0 });
    expect(env.transport.sent).toHaveLength(1);
  });

  it('lets exactly one of two workers racing on one database send each alert', async () => {
    const env = await setup();
    const otherTransport = createMemoryTransport();
    const other = createDeliveryWorker({
      db: env.openAnother(),
      clock: env.clock,
      logger: env.logger,
      transport: otherTransport,
      batchSize: 50,
    });
    for (let i = 0; i < 30; i++) await env.enqueue(`k${i}`);
    env.transport.setDelay(1);
    otherTransport.setDelay(1);
    const [a, b] = await Promise.all([env.worker.runOnce(), other.runOnce()]);
    expect(a.sent + b.sent).toBe(30);
    const subjects = [...env.transport.sent, ...otherTransport.sent].map((m) => m.subject);
    expect(new Set(subjects).size).toBe(30);
    expect(subjects).toHaveLength(30);
    expect(await env.outbox.countByStatus()).toEqual({ pending: 0, sending: 0, sent: 30, failed: 0 });
  });

  it('retries a failed send with exponential backoff on the clock, then delivers it', async () => {
    const env = await setup();
    await env.enqueue('a');
    env.transport.failNext(2);

    expect(await env.worker.runOnce()).toEqual({ sent: 0, failed: 1 });
    const first = await env.row('a');
    expect(first).toMatchObject({ status: 'pending', attempts: 1, last_error: 'connect ECONNREFUSED 127.0.0.1:25' });
    expect(Date.parse(first.next_attempt_at) - env.clock.now()).toBe(1 * MINUTE);

    env.clock.advance(MINUTE - 1);
    expect(await env.worker.runOnce()).toEqual({ sent: 0, failed: 0 });
    env.clock.advance(1);
    expect(await env.worker.runOnce()).toEqual({ sent: 0, failed: 1 });
    const second = await env.row('a');
    expect(second.attempts).toBe(2);
    expect(Date.parse(second.next_attempt_at) - env.clock.now()).toBe(2 * MINUTE);

    env.clock.advance(2 * MINUTE);
    expect(await env.worker.runOnce()).toEqual({ sent: 1, failed: 0 });
    expect(await env.row('a')).toMatchObject({ status: 'sent', attempts: 3, last_error: null });
    expect(env.transport.sent).toHaveLength(1);
  });

  it('jitters the delay between half and all of the exponential step, up to the cap', () => {
    expect(retryDelayMs(1, MINUTE, 60 * MINUTE, () => 0)).toBe(MINUTE / 2);
    expect(retryDelayMs(3, MINUTE, 60 * MINUTE, () => 1)).toBe(4 * MINUTE);
    expect(retryDelayMs(3, MINUTE, 60 * MINUTE, () => 0.5)).toBe(3 * MINUTE);
    expect(retryDelayMs(20, MINUTE, 60 * MINUTE, () => 1)).toBe(60 * MINUTE);
  });

  it('gives up after the last attempt and logs why without the message body', async () => {
    const env = await setup({ maxAttempts: 3 });
    await env.enqueue('a');
    env.transport.failNext(10);
    for (let i = 0; i < 3; i++) {
      expect(await env.worker.runOnce()).toEqual({ sent: 0, failed: 1 });
      env.clock.advance(60 * MINUTE);
    }
    expect(await env.row('a')).toMatchObject({
      status: 'failed',
      attempts: 3,
      last_error: 'connect ECONNREFUSED 127.0.0.1:25',
    });
    expect(await env.worker.runOnce()).toEqual({ sent: 0, failed: 0 });
    const giveUp = env.lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'alert e-mail failed; giving up');
    expect(giveUp).toMatchObject({
      attempts: 3,
      maxAttempts: 3,
      kind: 'api_key.expiring',
      error: 'connect ECONNREFUSED 127.0.0.1:25',
    });
    expect(env.lines.join('\n')).not.toContain('Text a');
  });

  it('returns alerts abandoned in sending by a crashed worker to pending', async () => {
    const env = await setup();
    const repo = createNotificationRepository(env.db);
    await env.enqueue('a');
    const { id } = await env.row('a');
    // A worker claims the row and dies before finishing.
    expect(await repo.claim(id, 'dead-worker', new Date(env.clock.now()).toISOString())).toBe(true);

    env.clock.advance(5 * MINUTE);
    expect(await env.worker.runOnce()).toEqual({ sent: 0, failed: 0 });
    expect((await env.row('a')).status).toBe('sending');

    env.clock.advance(6 * MINUTE);
    expect(await env.worker.runOnce()).toEqual({ sent: 1, failed: 0 });
    expect(await env.row('a')).toMatchObject({ status: 'sent', attempts: 2 });
    // The dead worker's late outcome no longer applies.
    expect(
      await repo.markAttemptFailed(id, 'dead-worker', {
        status: 'pending',
        attempts: 9,
        nextAttemptAt: '',
        lastError: 'late',
      }),
    ).toBe(false);
  });

  it('runs on a timer and stop() waits for the send in progress', async () => {
    const env = await setup();
    await env.enqueue('a');
    env.transport.setDelay(200);
    env.worker.start(10_000);
    await expect.poll(async () => (await env.row('a')).status, { interval: 2 }).toBe('sending');
    await env.worker.stop();
    expect((await env.row('a')).status).toBe('sent');
    await env.enqueue('b');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect((await env.row('b')).status).toBe('pending');
  });
});
