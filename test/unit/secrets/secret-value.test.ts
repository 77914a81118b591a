import { describe, expect, it } from 'vitest';
import { kvDataPath } from '../../../src/secrets/hashicorp-vault.js';
import { formatSecret, pickSecret, withSecret } from '../../../src/secrets/secret-value.js';

const where = 'Secret prod/openai';

describe('pickSecret', () => {
  it('takes a key of a JSON secret or of a Vault entry, the whole text without a key, or the only field', () => {
    expect(pickSecret('{"api_key":"sk-1","org":"o"}', 'api_key', where)).toBe('sk-1');
    expect(pickSecret({ api_key: 'sk-2', org: 'o' }, 'api_key', where)).toBe('sk-2');
    expect(pickSecret('sk-plain', null, where)).toBe('sk-plain');
    expect(pickSecret({ value: 'sk-3' }, null, where)).toBe('sk-3');
  });

  it('names what is missing, never the values', () => {
    expect(() => pickSecret({ api_key: 'sk-secret-value' }, 'token', where)).toThrow(
      'Secret prod/openai has no key token (it has: api_key).',
    );
    expect(() => pickSecret({ a: 'sk-secret-value', b: 'x' }, null, where)).toThrow(/several keys \(a, b\); name one/);
    expect(() => pickSecret('sk-secret-value', 'api_key', where)).toThrow(/not a JSON object/);
    expect(() => pickSecret('["sk-secret-value"]', 'api_key', where)).toThrow(/not a JSON object/);
  });
});

describe('formatSecret', () => {
  it('keeps text, stringifies other values, and parses JSON when asked', () => {
    expect(formatSecret('sk-1', 'string', where)).toBe('sk-1');
    expect(formatSecret(42, 'string', where)).toBe('42');
    expect(formatSecret('{"x-team":"ml"}', 'json', where)).toEqual({ 'x-team': 'ml' });
    expect(formatSecret({ a: 1 }, 'json', where)).toEqual({ a: 1 });
    expect(() => formatSecret('not json', 'json', where)).toThrow(/not valid JSON/);
  });
});

describe('withSecret', () => {
  it('sets one key and keeps the others, in the form the secret had', () => {
    expect(withSecret('{"api_key":"old","org":"o"}', 'api_key', 'new', where)).toBe('{"api_key":"new","org":"o"}');
    expect(withSecret({ api_key: 'old', org: 'o' }, 'api_key', 'new', where)).toEqual({ api_key: 'new', org: 'o' });
    expect(withSecret(null, 'api_key', 'new', where)).toBe('{"api_key":"new"}');
  });

  it('replaces the whole secret without a key (a Vault entry keeps its only field name)', () => {
    expect(withSecret('old', null, 'new', where)).toBe('new');
    expect(withSecret(null, null, 'new', where)).toBe('new');
    expect(withSecret({ token: 'old' }, null, 'new', where)).toEqual({ token: 'new' });
    expect(() => withSecret({ a: '1', b: '2' }, null, 'new', where)).toThrow(/several keys/);
  });
});

describe('kvDataPath', () => {
  it('turns <mount>/<path> into the KV v2 API path, and keeps a path already in that form', () => {
    expect(kvDataPath('secret/openai')).toBe('secret/data/openai');
    expect(kvDataPath('kv/teams/ml/openai')).toBe('kv/data/teams/ml/openai');
    expect(kvDataPath('secret/data/openai')).toBe('secret/data/openai');
    expect(kvDataPath('/secret/openai')).toBe('secret/data/openai');
  });
});
