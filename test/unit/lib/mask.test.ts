import { describe, expect, it } from 'vitest';
import { maskValue, nameOrMasked, withoutUrlCredentials } from '../../../src/lib/mask.js';

describe('nameOrMasked', () => {
  it('shows slugs and provider names in full, so the sender sees which one was not found', () => {
    for (const name of ['openai-prod', 'second', 'azure-openai', 'team_a.vk', 'a'.repeat(24)])
      expect(nameOrMasked(name)).toBe(name);
  });

  it('masks anything that could be a key: known prefixes, long values, odd characters', () => {
    const keys = [
      'sk-proj-abc',
      'svc-AbCdEf',
      'gsk_123',
      'AIzaSyA1',
      'xai-1',
      'pplx-9',
      'AKIAIOSFODNN7',
      'aB3dE5gH7jK9mN1pQ3rS5tU7vW9xY1z2',
      'a'.repeat(25),
      'has space',
      'key=value',
    ];
    for (const key of keys) {
      const shown = nameOrMasked(key);
      expect(shown, key).toBe(maskValue(key));
      expect(shown.length, key).toBeLessThanOrEqual(5);
    }
  });
});

describe('withoutUrlCredentials', () => {
  it('drops the user information of every URL in a text', () => {
    expect(withoutUrlCredentials('failed: https://u:p4ss@host/v1 and http://tok@h2')).toBe(
      'failed: https://***@host/v1 and http://***@h2',
    );
    expect(withoutUrlCredentials('mail me at a@b.c')).toBe('mail me at a@b.c');
  });
});
