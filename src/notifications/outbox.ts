import { isoAt, type Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { Db } from '../storage/database.js';
import { createNotificationRepository } from '../storage/repositories/notifications.js';
import type { Logger } from '../telemetry/logger.js';

/** The alerts the spec describes; stored as text, so new kinds need no migration. */
export type NotificationKind =
  | 'usage_limit.threshold'
  | 'usage_limit.exhausted'
  | 'api_key.rotation_upcoming'
  | 'api_key.rotated'
  | 'api_key.rotation_failed'
  | 'api_key.expiring';

export interface EnqueueInput {
  organisationId: string;
  /** The workspace the alert is about; its admins and managers are added to the recipients. */
  workspaceId?: string | null;
  kind: NotificationKind;
  /**
   * Names the alert, not the attempt: the same key is stored once, whoever raises it and however
   * often. Include whatever makes a new alert legitimately new (the limit, the period, the key).
   */
  dedupeKey: string;
  subject: string;
  text: string;
  /** Overrides the default recipients (organisation owners and admins, workspace admins and managers). */
  recipients?: readonly string[];
  /** Added to the recipients: an API key's `alert_emails`. */
  alsoTo?: readonly string[];
}

/** Case-insensitive de-duplication that keeps the first spelling and the order. */
export function uniqueEmails(emails: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of emails) {
    const email = raw.trim();
    const key = email.toLowerCase();
    if (email === '' || seen.has(key)) continue;
    seen.add(key);
    out.push(email);
  }
  return out;
}

/**
 * Writes alerts into the `notifications` table, where the delivery worker picks them up.
 * Writing is all a caller does: no alert waits for, or fails because of, the mail server.
 */
export function createNotificationOutbox(deps: { db: Db; clock: Clock; logger: Logger }) {
  const repo = createNotificationRepository(deps.db);

  return {
    /**
     * Stores the alert unless one with the same dedupe key exists. Returns true when this call
     * stored it. With nobody to send to, the alert is stored as `failed` ("no recipients") so
     * that operators can still see it.
     */
    async enqueue(input: EnqueueInput): Promise<boolean> {
      if (await repo.existsByDedupeKey(input.dedupeKey)) return false;
      const workspaceId = input.workspaceId ?? null;
      const recipients = uniqueEmails([
        ...(input.recipients ?? (await repo.findAlertRecipients(input.organisationId, workspaceId))),
        ...(input.alsoTo ?? []),
      ]);
      const now = isoAt(deps.clock.now());
      const noRecipients = recipients.length === 0;
      const id = newId();
      const inserted = await repo.insertIfNew({
        id,
        organisation_id: input.organisationId,
        workspace_id: workspaceId,
        kind: input.kind,
        dedupe_key: input.dedupeKey,
        recipients: JSON.stringify(recipients),
        subject: input.subject,
        body_text: input.text,
        status: noRecipients ? 'failed' : 'pending',
        attempts: 0,
        next_attempt_at: now,
        last_error: noRecipients ? 'no recipients' : null,
        claim_token: null,
        claimed_at: null,
        created_at: now,
        sent_at: null,
      });
      if (inserted && noRecipients) {
        deps.logger.warn(
          { notificationId: id, kind: input.kind, organisationId: input.organisationId, workspaceId },
          'alert has no recipients; stored as failed',
        );
      } else if (inserted) {
        deps.logger.debug({ notificationId: id, kind: input.kind, recipients: recipients.length }, 'alert enqueued');
      }
      return inserted;
    },

    /** What the outbox holds, newest first (`status: 'pending'` for what is waiting). */
    list: repo.list,
    countByStatus: repo.countByStatus,
  };
}

export type NotificationOutbox = ReturnType<typeof createNotificationOutbox>;
