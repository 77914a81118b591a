import { describe, expect, it, onTestFinished } from 'vitest';
import { startSmtp } from '../helpers/smtp-server.js';
import { loadConfig } from '../../src/config/load-config.js';
import { createDeliveryWorker } from '../../src/notifications/delivery-worker.js';
import { startNotifications } from '../../src/notifications/index.js';
import { createNotificationOutbox } from '../../src/notifications/outbox.js';
import { createSmtpTransport } from '../../src/notifications/smtp-transport.js';
import { addPerson, captureLogger, openNotificationsDb, OWNER_EMAIL } from '../unit/notifications/harness.js';

/** Decodes RFC 2047 encoded words (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`), as nodemailer writes them. */
function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?utf-8\?([QB])\?([^?]*)\?=/gi, (_m, enc: string, text: string) =>
      enc.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : Buffer.from(
            text
              .replace(/_/g, ' ')
              .replace(/=([0-9A-F]{2})/gi, (_h, hex: string) => String.fromCharCode(parseInt(hex, 16))),
            'latin1',
          ).toString('utf8'),
    );
}

/** Header fields (unfolded, decoded) and body of a raw RFC 5322 message. */
function parseMessage(raw: string) {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers = new Map<string, string>();
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).toLowerCase(), decodeWords(line.slice(colon + 1).trim()));
  }
  return { headers, body: raw.slice(split + 4) };
}

function smtpConfig(port: number, extra: Record<string, string> = {}) {
  return loadConfig({
    flags: {},
    env: {
      SVCGW_SMTP_HOST: '127.0.0.1',
      SVCGW_SMTP_PORT: String(port),
      SVCGW_SMTP_FROM: 'svcgw alerts <alerts@svcgw.test>',
      ...extra,
    },
  });
}

async function setup(port: number, extra: Record<string, string> = {}) {
  const env = await openNotificationsDb();
  const { logger, lines } = captureLogger();
  await addPerson(env.db, env.organisationId, 'manager@example.test', 'member', [
    { workspaceId: env.workspaceId, role: 'manager' },
  ]);
  const config = smtpConfig(port, extra);
  const transport = createSmtpTransport({ ...config, smtp_host: '127.0.0.1' });
  onTestFinished(() => transport.close());
  const outbox = createNotificationOutbox({ db: env.db, clock: env.clock, logger });
  const worker = createDeliveryWorker({ db: env.db, clock: env.clock, logger, transport, random: () => 1 });
  const enqueue = () =>
    outbox.enqueue({
      organisationId: env.organisationId,
      workspaceId: env.workspaceId,
      kind: 'usage_limit.exhausted',
      dedupeKey: 'usage_limit.exhausted:api_key:k1:100:2026-01-01',
      subject: 'Usage limit reached: API key "ci"',
      text: 'The API key "ci" has used its credit limit.',
    });
  return { ...env, config, logger, lines, outbox, worker, enqueue };
}

describe('alert e-mails over SMTP', () => {
  it('delivers an enqueued alert once to the organisation and workspace admins', async () => {
    const smtp = await startSmtp();
    const env = await setup(smtp.port);
    expect(await env.enqueue()).toBe(true);
    expect(await env.enqueue()).toBe(false);

    expect(await env.worker.runOnce()).toEqual({ sent: 1, failed: 0 });
    expect(smtp.received).toHaveLength(1);
    const [mail] = smtp.received;
    expect(mail?.mailFrom).toBe('alerts@svcgw.test');
    expect(mail?.rcptTo.sort()).toEqual(['manager@example.test', OWNER_EMAIL].sort());
    const { headers, body } = parseMessage(mail?.raw ?? '');
    expect(headers.get('from')).toBe('svcgw alerts <alerts@svcgw.test>');
    expect(headers.get('to')).toBe(`${OWNER_EMAIL}, manager@example.test`);
    expect(headers.get('subject')).toBe('Usage limit reached: API key "ci"');
    expect(headers.get('x-svcgw-notification-kind')).toBe('usage_limit.exhausted');
    expect(headers.get('message-id')).toMatch(/^<[0-9a-f-]{36}@svcgw>$/);
    expect(body.trim()).toBe('The API key "ci" has used its credit limit.');

    expect(await env.worker.runOnce()).toEqual({ sent: 0, failed: 0 });
    expect(smtp.received).toHaveLength(1);
    expect(await env.outbox.countByStatus()).toMatchObject({ sent: 1, pending: 0 });
  });

  it('keeps the alert while the SMTP server is down and delivers it when it is back', async () => {
    const probe = await startSmtp();
    const port = probe.port;
    await probe.close();
    const env = await setup(port);
    await env.enqueue();

    expect(await env.worker.runOnce()).toEqual({ sent: 0, failed: 1 });
    const [row] = await env.outbox.list();
    expect(row).toMatchObject({ status: 'pending', attempts: 1 });
    expect(row?.last_error).toMatch(/ECONNREFUSED|ECONNECTION/);
    expect(Date.parse(row?.next_attempt_at ?? '')).toBe(env.clock.now() + 60_000);

    const smtp = await startSmtp({ port });
    expect(await env.worker.runOnce()).toEqual({ sent: 0, failed: 0 });
    env.clock.advance(60_000);
    expect(await env.worker.runOnce()).toEqual({ sent: 1, failed: 0 });
    expect(smtp.received).toHaveLength(1);
    expect(await env.outbox.list()).toMatchObject([{ status: 'sent', attempts: 2 }]);
  });

  it('never writes the SMTP password to the outbox or the log when login fails', async () => {
    const password = 'hunter2-very-secret';
    const smtp = await startSmtp({
      auth: (_auth, _session, callback) => callback(new Error('Invalid username or password')),
    });
    const env = await setup(smtp.port, { SVCGW_SMTP_USER: 'alerts', SVCGW_SMTP_PASSWORD: password });
    await env.enqueue();

    expect(await env.worker.runOnce()).toEqual({ sent: 0, failed: 1 });
    const [row] = await env.outbox.list();
    expect(row?.last_error).toMatch(/EAUTH/);
    const written = `${row?.last_error}\n${env.lines.join('\n')}`;
    for (const form of [
      password,
      Buffer.from(password).toString('base64'),
      Buffer.from(`\u0000alerts\u0000${password}`).toString('base64'),
    ]) {
      expect(written).not.toContain(form);
    }
    expect(smtp.received).toHaveLength(0);
  });

  it('startNotifications runs the worker only when an SMTP host is set', async () => {
    const smtp = await startSmtp();
    const env = await setup(smtp.port);
    const notifications = startNotifications({
      config: env.config,
      db: env.db,
      clock: env.clock,
      logger: env.logger,
      intervalMs: 20,
    });
    onTestFinished(() => notifications.stop());
    expect(notifications.worker).not.toBeNull();
    await notifications.outbox.enqueue({
      organisationId: env.organisationId,
      kind: 'api_key.rotated',
      dedupeKey: 'api_key.rotated:k1:t1',
      subject: 'Rotated',
      text: 'Rotated.',
    });
    await expect.poll(() => smtp.received.length, { timeout: 5_000 }).toBe(1);
    await notifications.stop();

    const { logger, lines } = captureLogger();
    const off = startNotifications({
      config: loadConfig({ flags: {}, env: {} }),
      db: env.db,
      clock: env.clock,
      logger,
    });
    expect(off.worker).toBeNull();
    await off.outbox.enqueue({
      organisationId: env.organisationId,
      kind: 'api_key.rotated',
      dedupeKey: 'api_key.rotated:k1:t2',
      subject: 'Rotated',
      text: 'Rotated.',
    });
    await off.stop();
    expect(await off.outbox.countByStatus()).toMatchObject({ pending: 1, sent: 1 });
    expect(lines.filter((l) => l.includes('smtp_host is not set'))).toHaveLength(1);
  });
});
