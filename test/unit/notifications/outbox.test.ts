import { describe, expect, it } from 'vitest';
import { createNotificationOutbox, uniqueEmails } from '../../../src/notifications/outbox.js';
import { createNotificationRepository } from '../../../src/storage/repositories/notifications.js';
import { addPerson, addWorkspace, captureLogger, openNotificationsDb, OWNER_EMAIL } from './harness.js';

const alert = (dedupeKey: string) => ({
  kind: 'usage_limit.threshold' as const,
  dedupeKey,
  subject: 'Usage alert',
  text: 'Past the threshold.',
});

async function setup() {
  const env = await openNotificationsDb();
  const { logger, lines } = captureLogger();
  const outbox = createNotificationOutbox({ db: env.db, clock: env.clock, logger });
  return { ...env, outbox, lines };
}

const recipientsOf = async (env: Awaited<ReturnType<typeof setup>>, dedupeKey: string) => {
  const row = await env.db
    .selectFrom('notifications')
    .selectAll()
    .where('dedupe_key', '=', dedupeKey)
    .executeTakeFirstOrThrow();
  return JSON.parse(row.recipients) as string[];
};

describe('notification outbox', () => {
  it('sends workspace alerts to organisation owners and admins and the workspace admins and managers', async () => {
    const env = await setup();
    const other = await addWorkspace(env.db, env.organisationId, 'other');
    await addPerson(env.db, env.organisationId, 'org-admin@example.test', 'admin');
    await addPerson(env.db, env.organisationId, 'org-member@example.test', 'member');
    await addPerson(env.db, env.organisationId, 'ws-manager@example.test', 'member', [
      { workspaceId: env.workspaceId, role: 'manager' },
    ]);
    await addPerson(env.db, env.organisationId, 'ws-admin@example.test', 'member', [
      { workspaceId: env.workspaceId, role: 'admin' },
    ]);
    await addPerson(env.db, env.organisationId, 'ws-member@example.test', 'member', [
      { workspaceId: env.workspaceId, role: 'member' },
    ]);
    await addPerson(env.db, env.organisationId, 'other-ws-admin@example.test', 'member', [
      { workspaceId: other, role: 'admin' },
    ]);

    expect(
      await env.outbox.enqueue({ organisationId: env.organisationId, workspaceId: env.workspaceId, ...alert('k1') }),
    ).toBe(true);
    // The owner is also the default workspace's admin: listed once.
    expect((await recipientsOf(env, 'k1')).sort()).toEqual(
      [OWNER_EMAIL, 'org-admin@example.test', 'ws-admin@example.test', 'ws-manager@example.test'].sort(),
    );

    expect(await env.outbox.enqueue({ organisationId: env.organisationId, ...alert('k2') })).toBe(true);
    expect((await recipientsOf(env, 'k2')).sort()).toEqual([OWNER_EMAIL, 'org-admin@example.test'].sort());
  });

  it('does not send to people of another organisation', async () => {
    const env = await setup();
    const now = new Date().toISOString();
    await env.db
      .insertInto('organisations')
      .values({ id: 'org-2', name: 'Other', created_at: now, last_updated_at: now })
      .execute();
    await addPerson(env.db, 'org-2', 'stranger@example.test', 'owner');
    await env.outbox.enqueue({ organisationId: env.organisationId, workspaceId: env.workspaceId, ...alert('k') });
    expect(await recipientsOf(env, 'k')).toEqual([OWNER_EMAIL]);
  });

  it('stores an alert once however often, and by however many instances, it is raised', async () => {
    const env = await setup();
    const second = createNotificationOutbox({
      db: env.openAnother(),
      clock: env.clock,
      logger: captureLogger().logger,
    });
    const input = { organisationId: env.organisationId, ...alert('same') };
    expect(await env.outbox.enqueue(input)).toBe(true);
    expect(await env.outbox.enqueue(input)).toBe(false);
    const raced = await Promise.all([
      env.outbox.enqueue({ ...input, dedupeKey: 'raced' }),
      second.enqueue({ ...input, dedupeKey: 'raced' }),
      second.enqueue({ ...input, dedupeKey: 'raced' }),
    ]);
    expect(raced.filter(Boolean)).toHaveLength(1);
    expect(await env.db.selectFrom('notifications').select('id').execute()).toHaveLength(2);
  });

  it('ignores a second insert with the same dedupe key at the database (insert-or-ignore)', async () => {
    const env = await setup();
    const repo = createNotificationRepository(env.db);
    const row = (id: string) => ({
      id,
      organisation_id: env.organisationId,
      workspace_id: null,
      kind: 'api_key.rotated',
      dedupe_key: 'dup',
      recipients: '[]',
      subject: 's',
      body_text: 't',
      status: 'pending' as const,
      attempts: 0,
      next_attempt_at: '2026-01-01T00:00:00.000Z',
      last_error: null,
      claim_token: null,
      claimed_at: null,
      created_at: '2026-01-01T00:00:00.000Z',
      sent_at: null,
    });
    expect(await repo.insertIfNew(row('id-1'))).toBe(true);
    expect(await repo.insertIfNew(row('id-2'))).toBe(false);
    expect(await env.db.selectFrom('notifications').select('id').execute()).toEqual([{ id: 'id-1' }]);
  });

  it('uses given recipients, de-duplicated without regard to case', async () => {
    const env = await setup();
    await env.outbox.enqueue({
      organisationId: env.organisationId,
      ...alert('k'),
      recipients: ['A@example.test', 'a@example.test ', 'b@example.test'],
    });
    expect(await recipientsOf(env, 'k')).toEqual(['A@example.test', 'b@example.test']);
    expect(uniqueEmails(['', ' x@y ', 'X@Y'])).toEqual(['x@y']);
  });

  it('stores an alert with nobody to send to as failed, and says so', async () => {
    const env = await setup();
    expect(await env.outbox.enqueue({ organisationId: env.organisationId, ...alert('k'), recipients: [] })).toBe(true);
    const row = await env.db.selectFrom('notifications').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'failed', last_error: 'no recipients', attempts: 0 });
    expect(env.lines.some((l) => l.includes('no recipients'))).toBe(true);
  });

  it('lists what is pending', async () => {
    const env = await setup();
    await env.outbox.enqueue({ organisationId: env.organisationId, ...alert('k') });
    expect(await env.outbox.countByStatus()).toEqual({ pending: 1, sending: 0, sent: 0, failed: 0 });
    const [row] = await env.outbox.list({ status: 'pending' });
    expect(row).toMatchObject({
      kind: 'usage_limit.threshold',
      subject: 'Usage alert',
      body_text: 'Past the threshold.',
      attempts: 0,
      next_attempt_at: new Date(env.clock.now()).toISOString(),
    });
  });
});
