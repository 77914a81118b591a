import { describe, expect, it } from 'vitest';
import { redactSecrets } from '../../../src/lib/redact.js';

describe('redactSecrets', () => {
  it('hides secret-named fields at any depth and keeps the rest', () => {
    const out = redactSecrets({ name: 'n', api_key: 'sk-1', nested: [{ password: 'p', client_secret: 's', value: 1 }], conditions: [{ key: 'api_key', value: 'x' }] });
    expect(out).toEqual({ name: 'n', api_key: '[REDACTED]', nested: [{ password: '[REDACTED]', client_secret: '[REDACTED]', value: 1 }], conditions: [{ key: 'api_key', value: 'x' }] });
  });

  it('hides extra fields a route names', () => {
    expect(redactSecrets({ key: 'sk-live', name: 'x' }, ['key'])).toEqual({ key: '[REDACTED]', name: 'x' });
  });
});
