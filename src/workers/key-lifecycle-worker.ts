import {
  generateRawKey,
  hashKey,
  MIN_TRANSITION_MS,
  nextRotationPast,
  parseRotationPolicy,
  type ApiKeyVerifier,
} from '../auth/api-key-service.js';
import type { Clock } from '../lib/clock.js';
import {
  apiKeyExpiring,
  apiKeyRotated,
  apiKeyRotationFailed,
  apiKeyRotationUpcoming,
  type AlertMessage,
} from '../notifications/alert-messages.js';
import { rotateThroughSecretManager, rotationTargetOf } from '../auth/vault-rotation.js';
import type { RotationWriter } from '../secrets/rotation-writer.js';
import type { EnqueueInput } from '../notifications/outbox.js';
import type { Db } from '../storage/database.js';
import { createApiKeyRepository, type ApiKeyRow } from '../storage/repositories/api-keys.js';
import { createNotificationRepository } from '../storage/repositories/notifications.js';
import { runExclusive } from '../storage/job-lock.js';
import type { Logger } from '../telemetry/logger.js';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

/** How often the server runs the worker. */
export const KEY_LIFECYCLE_INTERVAL_MS = 30_000;
/** How long before a scheduled rotation its notice goes out. */
export const ROTATION_NOTICE_AHEAD_MS = DAY_MS;
/** Expiry warnings, furthest first; each is sent once per key and expiry time. */
export const EXPIRY_WARNINGS = [
  { label: '7d', aheadMs: 7 * DAY_MS },
  { label: '1d', aheadMs: DAY_MS },
] as const;

export interface KeyLifecycleRun {
  expired: number;
  rotated: number;
  notices: number;
  /** Another instance was running the job: this run did nothing. */
  skipped?: true;
}

export interface KeyLifecycleDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  verifier: Pick<ApiKeyVerifier, 'invalidate'>;
  /** The notification outbox's enqueue; true when the notice was stored (not a duplicate). */
  enqueue: (input: EnqueueInput) => Promise<boolean>;
  /** Writes new keys to the secret references rotation policies name (see auth/vault-rotation.ts). */
  rotationWriter?: RotationWriter;
}

/**
 * The background side of API keys: marks keys whose expiry has passed as expired, performs
 * scheduled rotations and sends the rotation and expiry notices. Everything it needs is in the
 * database, so work missed while the server was down happens at the next start; each step is
 * a conditional update, so two instances on one database do it once.
 *
 * A scheduled rotation issues no secret that somebody would have to be sent: it moves the
 * current secret into its transition period and puts a secret nobody knows in its place. The
 * owner gets the new key with POST /v1/api-keys/{id}/rotate (see docs/api-key-rotation.md).
 * When the policy names a secret reference, the new key is written there instead, and clients
 * that read it from the secret manager pick it up with nobody collecting it.
 */
export function createKeyLifecycleWorker(deps: KeyLifecycleDeps) {
  const keys = createApiKeyRepository(deps.db);
  const outbox = createNotificationRepository(deps.db);
  const logger = deps.logger.child({ component: 'key-lifecycle' });
  const iso = (ms: number) => new Date(ms).toISOString();

  /** Runs `step` for each row; a row that fails is logged and retried on the next run, the rest go on. */
  async function eachRow(rows: ApiKeyRow[], what: string, step: (row: ApiKeyRow) => Promise<boolean>): Promise<number> {
    let count = 0;
    for (const row of rows) {
      try {
        if (await step(row)) count++;
      } catch (error) {
        logger.error({ err: error, apiKeyId: row.id }, `${what} failed`);
      }
    }
    return count;
  }

  async function expire(now: number): Promise<number> {
    return eachRow(await keys.listExpiredActive(iso(now)), 'marking an API key expired', async (row) => {
      const marked = await keys.markExpired(row.id, iso(now));
      if (marked) deps.verifier.invalidate(row.id);
      return marked;
    });
  }

  async function rotateDue(now: number): Promise<number> {
    return eachRow(await keys.listRotationsDue(iso(now)), 'scheduled API key rotation', async (row) => {
      const policy = parseRotationPolicy(row.rotation_policy);
      const period = policy?.rotation_period ?? null;
      const next = period === null ? null : iso(nextRotationPast(Date.parse(row.next_rotation_at!), period, now));
      const guard = { key_hash: row.key_hash, next_rotation_at: row.next_rotation_at };
      const target = rotationTargetOf(row);
      if (target) return rotateIntoSecretManager(row, target, guard, next, now);
      if (row.new_key_pending_since !== null) {
        // Nobody collected the secret of the last scheduled rotation: no issued secret is current, so there is nothing to rotate.
        await keys.updateIfUnchanged(row.id, guard, { next_rotation_at: next });
        return false;
      }
      const applied = await keys.updateIfUnchanged(row.id, guard, {
        // A fresh random secret whose raw value is dropped here: it is never stored, shown or sent.
        key_hash: hashKey(generateRawKey()),
        previous_key_hash: row.key_hash,
        previous_key_expires_at: iso(now + (policy?.key_transition_period_ms ?? MIN_TRANSITION_MS)),
        last_rotated_at: iso(now),
        new_key_pending_since: iso(now),
        next_rotation_at: next,
        last_updated_at: iso(now),
      });
      if (applied) deps.verifier.invalidate(row.id);
      return applied;
    });
  }

  /** A due rotation of a key whose policy names a secret reference; a failed write is noticed and retried. */
  async function rotateIntoSecretManager(
    row: ApiKeyRow,
    target: NonNullable<ReturnType<typeof rotationTargetOf>>,
    guard: { key_hash: string; next_rotation_at: string | null },
    next: string | null,
    now: number,
  ): Promise<boolean> {
    const policy = parseRotationPolicy(row.rotation_policy);
    if (!deps.rotationWriter)
      throw new Error('no secret manager writer is configured for rotations into secret references');
    const result = await rotateThroughSecretManager(
      { keys, writer: deps.rotationWriter, verifier: deps.verifier },
      row,
      {
        target,
        now,
        transitionMs: policy?.key_transition_period_ms ?? MIN_TRANSITION_MS,
        guard,
        done: { next_rotation_at: next },
      },
    );
    if (result.ok || result.reason === 'conflict') return result.ok;
    const reason = result.error instanceof Error ? result.error.message : String(result.error);
    logger.error(
      { apiKeyId: row.id, secretReferenceId: target.secretReferenceId, reason },
      'scheduled API key rotation could not write the new key to its secret reference; the current key stays, retried next run',
    );
    await notify(
      row,
      apiKeyRotationFailed({
        apiKeyId: row.id,
        apiKeyName: row.name,
        dueAt: row.next_rotation_at!,
        secretReference: target.secretReferenceId,
        reason,
      }),
    );
    return false;
  }

  /** The key's user, then the organisation's owners and admins (and the workspace's admins and managers). */
  async function recipientsOf(row: ApiKeyRow): Promise<string[]> {
    const admins = await outbox.findAlertRecipients(row.organisation_id, row.workspace_id);
    const owner = row.user_id === null ? undefined : await keys.findUserEmail(row.user_id);
    const alsoTo = row.alert_emails ? (JSON.parse(row.alert_emails) as string[]) : [];
    return [...(owner === undefined ? [] : [owner]), ...admins, ...alsoTo];
  }

  async function notify(row: ApiKeyRow, message: AlertMessage): Promise<boolean> {
    if (await outbox.existsByDedupeKey(message.dedupeKey)) return false;
    return deps.enqueue({
      organisationId: row.organisation_id,
      workspaceId: row.workspace_id,
      ...message,
      recipients: await recipientsOf(row),
    });
  }

  const rotateCall = (row: ApiKeyRow) => `POST /v1/api-keys/${row.id}/rotate`;

  async function sendNotices(now: number): Promise<number> {
    let sent = 0;
    // Completed rotations, manual or scheduled: the rotation time names the notice.
    sent += await eachRow(await keys.listInTransition(iso(now)), 'rotation notice', async (row) => {
      const message = apiKeyRotated({
        apiKeyId: row.id,
        apiKeyName: row.name,
        rotatedAt: row.last_rotated_at!,
        transitionEndsAt: row.previous_key_expires_at!,
      });
      const target = rotationTargetOf(row);
      if (target && row.new_key_pending_since === null) {
        const lead = `The new key was written to the secret reference ${target.secretReferenceId}${target.secretKey ? ` (key ${target.secretKey})` : ''}: clients that read it from the secret manager pick it up, nobody has to collect it. After ${row.previous_key_expires_at} requests with the previous key are refused.`;
        return notify(row, { ...message, text: `${lead}\n\n${message.text}` });
      }
      if (row.new_key_pending_since === null || row.new_key_pending_since !== row.last_rotated_at)
        return notify(row, message);
      const lead = `This was a scheduled rotation. No new key was issued to anyone yet: call ${rotateCall(row)} with a key allowed to update this key to receive it (it is shown once, in the response). After ${row.previous_key_expires_at} requests with the previous key are refused.`;
      return notify(row, { ...message, text: `${lead}\n\n${message.text}` });
    });
    sent += await eachRow(
      await keys.listRotationsDue(iso(now + ROTATION_NOTICE_AHEAD_MS), iso(now)),
      'upcoming rotation notice',
      async (row) => {
        if (row.new_key_pending_since !== null) return false;
        const message = apiKeyRotationUpcoming({
          apiKeyId: row.id,
          apiKeyName: row.name,
          nextRotationAt: row.next_rotation_at!,
        });
        const target = rotationTargetOf(row);
        const lead = target
          ? `At ${row.next_rotation_at} the new key will be written to the secret reference ${target.secretReferenceId}, where clients that read it pick it up; the current key then stays valid for its transition period. Nothing needs to be done.`
          : `To rotate it yourself before then, call ${rotateCall(row)}: you receive the new key at once, and that rotation takes the place of the scheduled one. Otherwise, at ${row.next_rotation_at}, the current key enters its transition period and stops working when it ends; the same call then gives you the new key.`;
        return notify(row, { ...message, text: `${lead}\n\n${message.text}` });
      },
    );
    // Each warning covers the time up to the next one; a key created inside a warning's window skips it.
    for (const [index, warning] of EXPIRY_WARNINGS.entries()) {
      const after = index + 1 < EXPIRY_WARNINGS.length ? EXPIRY_WARNINGS[index + 1]!.aheadMs : 0;
      sent += await eachRow(
        await keys.listExpiringBetween(iso(now + after), iso(now + warning.aheadMs)),
        'expiry warning',
        async (row) => {
          if (Date.parse(row.created_at) > Date.parse(row.expires_at!) - warning.aheadMs) return false;
          const message = apiKeyExpiring({ apiKeyId: row.id, apiKeyName: row.name, expiresAt: row.expires_at! });
          return notify(row, { ...message, dedupeKey: `${message.dedupeKey}:${warning.label}` });
        },
      );
    }
    return sent;
  }

  async function runAt(now: number): Promise<KeyLifecycleRun> {
    const expired = await expire(now);
    const rotated = await rotateDue(now);
    const notices = await sendNotices(now);
    if (expired + rotated + notices > 0) logger.info({ expired, rotated, notices }, 'API key lifecycle run');
    return { expired, rotated, notices };
  }

  // Runs never overlap: a run asked for while one is going waits for it.
  let chain: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;

  /** One run at the clock's current time; the server's timer and tests call it. */
  function runOnce(): Promise<KeyLifecycleRun> {
    const run = chain.then(async () => {
      // One instance at a time (see storage/job-lock.ts); the others' runs find nothing left.
      const done = await runExclusive(deps.db, 'key-lifecycle', () => runAt(deps.clock.now()));
      return done.ran ? done.value : { expired: 0, rotated: 0, notices: 0, skipped: true as const };
    });
    chain = run.catch(() => undefined);
    return run;
  }

  return {
    runOnce,
    /** Runs once now, then every `intervalMs`; the timer does not keep the process alive. */
    start(intervalMs: number = KEY_LIFECYCLE_INTERVAL_MS): void {
      const tick = () =>
        void runOnce().catch((error: unknown) => logger.error({ err: error }, 'API key lifecycle run failed'));
      tick();
      timer = setInterval(tick, intervalMs);
      timer.unref();
    },
    /** Stops the timer and waits for a run in progress; call before the database closes. */
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = null;
      await chain;
    },
  };
}

export type KeyLifecycleWorker = ReturnType<typeof createKeyLifecycleWorker>;
