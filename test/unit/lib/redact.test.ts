import { describe, expect, it } from 'vitest';
import { isSecretField, redactSecrets, safeJson } from '../../../src/lib/redact.js';

/** `{ n: { n: … leaf } }` with `levels` objects above the leaf, built without recursion. */
function nested(levels: number, leaf: unknown): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = { n: value, [`level_${i}`]: i };
  return value;
}

describe('redactSecrets', () => {
  it('hides secret-named fields at any depth and keeps the rest', () => {
    const out = redactSecrets({
      name: 'n',
      api_key: 'sk-1',
      nested: [{ password: 'p', client_secret: 's', value: 1 }],
      conditions: [{ key: 'api_key', value: 'x' }],
    });
    expect(out).toEqual({
      name: 'n',
      api_key: '[REDACTED]',
      nested: [{ password: '[REDACTED]', client_secret: '[REDACTED]', value: 1 }],
      conditions: [{ key: 'api_key', value: 'x' }],
    });
  });

  it('hides extra fields a route names', () => {
    expect(redactSecrets({ key: 'sk-live', name: 'x' }, ['key'])).toEqual({ key: '[REDACTED]', name: 'x' });
  });

  it('redacts a secret 10,000 levels down without overflowing the stack, and the copy serialises', () => {
    const out = redactSecrets(nested(10_000, { subscription_key: 'deep-secret', keep: 'visible' }));
    let leaf = out as Record<string, unknown>;
    for (let i = 0; i < 10_000; i++) leaf = leaf.n as Record<string, unknown>;
    expect(leaf).toEqual({ subscription_key: '[REDACTED]', keep: 'visible' });
    const text = safeJson(out);
    expect(text).not.toContain('deep-secret');
    expect(text).toContain('"subscription_key":"[REDACTED]"');
    // Written in full although JSON.stringify itself overflows at this depth.
    expect(text.startsWith('{"n":{"n":')).toBe(true);
    expect(text.split('"n":').length - 1).toBe(10_000);
  });

  it('writes what JSON.stringify writes', () => {
    const value = {
      a: [1, 'two', null, undefined, { b: true, c: undefined }],
      d: { e: -1.5, 'quote"d': 'line\nbreak' },
      f: [] as unknown[],
      g: {},
    };
    let deep: unknown = value;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    let text = safeJson(deep);
    for (let i = 0; i < 10_000; i++) text = text.slice(1, -1);
    expect(text).toBe(JSON.stringify(value));
  });

  it('copies arrays 10,000 deep and keeps the order of fields', () => {
    let value: unknown = [{ token: 't', a: 1 }];
    for (let i = 0; i < 10_000; i++) value = [value, i];
    let out = redactSecrets(value) as unknown[];
    for (let i = 0; i < 10_000; i++) out = out[0] as unknown[];
    expect(out).toEqual([{ token: '[REDACTED]', a: 1 }]);
    expect(Object.keys(redactSecrets({ z: 1, password: 'p', a: 2, m: { y: 1, b: 2 } }) as object)).toEqual([
      'z',
      'password',
      'a',
      'm',
    ]);
  });

  it('never throws: cycles, bigint, binary, dates, functions and a field named __proto__', () => {
    const cyclic: Record<string, unknown> = { name: 'c', secret: 's' };
    cyclic.self = cyclic;
    const odd = JSON.parse('{"__proto__": {"password": "p"}, "big": 1}') as Record<string, unknown>;
    const out = redactSecrets({
      cyclic,
      big: 10n,
      bytes: Buffer.from('abc'),
      at: new Date(0),
      fn: () => 1,
      odd,
    }) as Record<string, any>;
    expect(out.cyclic).toEqual({ name: 'c', secret: '[REDACTED]', self: '[Circular]' });
    expect(out.big).toBe('10');
    expect(out.bytes).toBe('[binary 3 bytes]');
    expect(out.at).toBe('1970-01-01T00:00:00.000Z');
    expect(Object.getPrototypeOf(out.odd)).toBe(Object.prototype);
    expect(safeJson(out.odd)).toBe('{"__proto__":{"password":"[REDACTED]"},"big":1}');
    expect(({} as Record<string, unknown>).password).toBeUndefined();
  });

  it('removes the password of a URL with credentials, wherever the URL is', () => {
    expect(
      redactSecrets({
        url: 'postgres://app:hunter2@db.internal:5432/svc',
        note: 'see https://user:pw@example.com/x and mail a@b.c',
      }),
    ).toEqual({
      url: 'postgres://app:[REDACTED]@db.internal:5432/svc',
      note: 'see https://user:[REDACTED]@example.com/x and mail a@b.c',
    });
  });
});

describe('isSecretField', () => {
  it('knows credential names in snake, camel and header case', () => {
    for (const name of [
      'api_key',
      'apiKey',
      'x-api-key',
      'apikey',
      'subscription_key',
      'Ocp-Apim-Subscription-Key',
      'access_key',
      'private_key',
      'aws_secret_access_key',
      'secret_key',
      'client_secret',
      'clientSecret',
      'secret',
      'x_token',
      'token',
      'access_token',
      'refreshToken',
      'aws_session_token',
      'password',
      'passwd',
      'db_password',
      'authorization',
      'Proxy-Authorization',
      'credentials',
      'credential',
      'service_account_json',
      'vertex_service_account_json',
      'connection_string',
      'cookie',
    ])
      expect(isSecretField(name), name).toBe(true);
  });

  it('leaves ordinary fields readable', () => {
    for (const name of [
      'key',
      'value_key',
      'cache_key',
      'partition_key',
      'virtual_key',
      'public_key',
      'max_tokens',
      'total_tokens',
      'api_keys',
      'user_api_keys',
      'api_key_id',
      'aws_access_key_id',
      'token_count',
      'name',
      'custom_host',
      'azure_auth_mode',
      'secret_name_hint',
      'keys',
    ])
      expect(isSecretField(name), name).toBe(false);
  });
});
