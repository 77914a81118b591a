import type { Generated } from 'kysely';

export interface AuditLogsTable {
  seq: Generated<number>;
  id: string;
  organisation_id: string;
  workspace_id: string | null;
  timestamp: string;
  /** `jwt`: a caller that authenticated with a JWT (docs/jwt.md), or tried to; `session`: an SSO session (docs/sso.md). */
  actor_type: 'api_key' | 'system' | 'jwt' | 'session';
  actor_key_id: string | null;
  actor_user_id: string | null;
  action: string;
  resource_type: string;
  resource_id: string | null;
  method: string;
  path: string;
  query: string | null;
  request_body: string | null;
  response_status_code: number;
  client_ip: string | null;
  /** The country the proxy in front named (`cf-ipcountry` / `x-country`); absent on records from before 0031. */
  country?: string | null;
  request_id: string;
  /** Why an authentication was refused (failed JWTs); null for every other record. */
  detail?: string | null;
}

export type NotificationStatus = 'pending' | 'sending' | 'sent' | 'failed';

/**
 * The alert e-mail outbox. `dedupe_key` is unique so that an alert raised twice (or by two
 * instances) is stored, and sent, once. `recipients` is a JSON array of e-mail addresses.
 * `claim_token` and `claimed_at` are set while one worker holds the row in `sending`.
 */
export interface NotificationsTable {
  id: string;
  organisation_id: string;
  workspace_id: string | null;
  kind: string;
  dedupe_key: string;
  recipients: string;
  subject: string;
  body_text: string;
  status: NotificationStatus;
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  claim_token: string | null;
  claimed_at: string | null;
  created_at: string;
  sent_at: string | null;
}

/** The audit and notifications tables, as `Database` (../schema.ts) joins them. */
export interface AuditAndNotificationsTables {
  audit_logs: AuditLogsTable;
  notifications: NotificationsTable;
}
