import { describe, expect, it } from 'vitest';
import { apiKeyExpiring, usageLimitExhausted, usageLimitThreshold } from '../../../src/notifications/alert-messages.js';
import { scrub } from '../../../src/notifications/smtp-transport.js';

describe('scrub', () => {
  it('removes every secret form and bounds the length', () => {
    expect(scrub('535 bad login s3cret-pass for s3cret-pass', ['s3cret-pass'])).toBe(
      '535 bad login [REDACTED] for [REDACTED]',
    );
    expect(scrub('x'.repeat(600), [])).toHaveLength(501);
  });
});

describe('alert messages', () => {
  const facts = {
    resourceType: 'api_key' as const,
    resourceId: 'k1',
    resourceName: 'ci',
    currentUsage: 85,
    creditLimit: 100,
    periodStartedAt: '2026-01-01T00:00:00.000Z',
  };

  it('makes a new dedupe key when the limit, the threshold or the period changes, and only then', () => {
    const key = (f: Partial<typeof facts> & { alertThreshold?: number }) =>
      usageLimitThreshold({ ...facts, alertThreshold: 80, ...f }).dedupeKey;
    expect(key({ currentUsage: 90 })).toBe(key({}));
    expect(
      new Set([
        key({}),
        key({ creditLimit: 200 }),
        key({ alertThreshold: 90 }),
        key({ periodStartedAt: '2026-02-01T00:00:00.000Z' }),
      ]).size,
    ).toBe(4);
    expect(usageLimitExhausted(facts).kind).toBe('usage_limit.exhausted');
    expect(apiKeyExpiring({ apiKeyId: 'k1', apiKeyName: 'ci', expiresAt: '2026-03-01T00:00:00.000Z' })).toMatchObject({
      kind: 'api_key.expiring',
      dedupeKey: 'api_key.expiring:k1:2026-03-01T00:00:00.000Z',
    });
  });
});
