import type { EnqueueInput } from './outbox.js';

/** What a builder fills in; the caller adds the organisation and workspace. */
export type AlertMessage = Pick<EnqueueInput, 'kind' | 'dedupeKey' | 'subject' | 'text'>;

export type LimitedResource =
  'api_key' | 'virtual_key' | 'provider' | 'workspace' | 'integration_workspace' | 'usage_limits_policy' | 'deployment';

export interface UsageLimitFacts {
  resourceType: LimitedResource;
  resourceId: string;
  resourceName: string;
  currentUsage: number;
  creditLimit: number;
  /**
   * When the current usage period began (the last reset). Part of the dedupe key: after a
   * reset the same alert may be raised again.
   */
  periodStartedAt: string;
}

const label: Record<LimitedResource, string> = {
  api_key: 'API key',
  virtual_key: 'virtual key',
  workspace: 'workspace',
  integration_workspace: 'integration (workspace)',
  usage_limits_policy: 'usage limits policy',
  deployment: 'deployment',
  provider: 'provider',
};

const FOOTER = '\n\nThis alert was sent by svcgw to the administrators of your organisation and workspace.';

/**
 * The credit limit and the threshold are in the dedupe key: the spec resets the alerts when the
 * limit is increased or the threshold changed, and a changed value makes a new key.
 */
export function usageLimitThreshold(facts: UsageLimitFacts & { alertThreshold: number }): AlertMessage {
  return {
    kind: 'usage_limit.threshold',
    dedupeKey: `usage_limit.threshold:${facts.resourceType}:${facts.resourceId}:${facts.creditLimit}:${facts.alertThreshold}:${facts.periodStartedAt}`,
    subject: `Usage alert: ${label[facts.resourceType]} "${facts.resourceName}" passed its alert threshold`,
    text: `The ${label[facts.resourceType]} "${facts.resourceName}" (${facts.resourceId}) has used ${facts.currentUsage} of its credit limit of ${facts.creditLimit}, past the alert threshold of ${facts.alertThreshold}.${FOOTER}`,
  };
}

export function usageLimitExhausted(facts: UsageLimitFacts): AlertMessage {
  return {
    kind: 'usage_limit.exhausted',
    dedupeKey: `usage_limit.exhausted:${facts.resourceType}:${facts.resourceId}:${facts.creditLimit}:${facts.periodStartedAt}`,
    subject: `Usage limit reached: ${label[facts.resourceType]} "${facts.resourceName}"`,
    text: `The ${label[facts.resourceType]} "${facts.resourceName}" (${facts.resourceId}) has used ${facts.currentUsage} of its credit limit of ${facts.creditLimit}. Requests are refused until the limit is increased or the usage period resets.${FOOTER}`,
  };
}

export interface ApiKeyFacts {
  apiKeyId: string;
  apiKeyName: string;
}

export function apiKeyRotationUpcoming(facts: ApiKeyFacts & { nextRotationAt: string }): AlertMessage {
  return {
    kind: 'api_key.rotation_upcoming',
    dedupeKey: `api_key.rotation_upcoming:${facts.apiKeyId}:${facts.nextRotationAt}`,
    subject: `API key "${facts.apiKeyName}" will be rotated on ${facts.nextRotationAt}`,
    text: `The API key "${facts.apiKeyName}" (${facts.apiKeyId}) is scheduled for rotation at ${facts.nextRotationAt}. After the rotation the old key stays valid for the transition period; update your clients with the new key before it ends.${FOOTER}`,
  };
}

/** Never carries the new key: it is shown once, to whoever rotated it. */
export function apiKeyRotated(facts: ApiKeyFacts & { rotatedAt: string; transitionEndsAt: string }): AlertMessage {
  return {
    kind: 'api_key.rotated',
    dedupeKey: `api_key.rotated:${facts.apiKeyId}:${facts.rotatedAt}`,
    subject: `API key "${facts.apiKeyName}" was rotated`,
    text: `The API key "${facts.apiKeyName}" (${facts.apiKeyId}) was rotated at ${facts.rotatedAt}. The previous key stays valid until ${facts.transitionEndsAt}.${FOOTER}`,
  };
}

/** A scheduled rotation whose new key could not be written to its secret reference: nothing changed, it is retried. */
export function apiKeyRotationFailed(
  facts: ApiKeyFacts & { dueAt: string; secretReference: string; reason: string },
): AlertMessage {
  return {
    kind: 'api_key.rotation_failed',
    dedupeKey: `api_key.rotation_failed:${facts.apiKeyId}:${facts.dueAt}`,
    subject: `API key "${facts.apiKeyName}" could not be rotated into its secret manager`,
    text: `The scheduled rotation of the API key "${facts.apiKeyName}" (${facts.apiKeyId}), due at ${facts.dueAt}, could not write the new key to the secret reference ${facts.secretReference}: ${facts.reason}\n\nThe current key was not changed and keeps working; the rotation is tried again every 30 seconds until the write succeeds. Check the secret reference's credentials and permissions (it needs to write the secret).${FOOTER}`,
  };
}

export function apiKeyExpiring(facts: ApiKeyFacts & { expiresAt: string }): AlertMessage {
  return {
    kind: 'api_key.expiring',
    dedupeKey: `api_key.expiring:${facts.apiKeyId}:${facts.expiresAt}`,
    subject: `API key "${facts.apiKeyName}" expires on ${facts.expiresAt}`,
    text: `The API key "${facts.apiKeyName}" (${facts.apiKeyId}) expires at ${facts.expiresAt}. Requests made with it are refused after that time.${FOOTER}`,
  };
}
