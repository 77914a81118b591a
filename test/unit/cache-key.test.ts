import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/cache/canonical-json.js';
import { exactCacheKey, splitForSemantic, type CacheRequest } from '../../src/cache/cache-key.js';

const base: CacheRequest = {
  organisationId: 'o',
  workspaceId: 'w',
  namespace: null,
  endpoint: '/v1/chat/completions',
  route: 'r',
  body: {},
};
const req = (body: unknown, extra: Partial<CacheRequest> = {}): CacheRequest => ({ ...base, body, ...extra });

describe('cache keys', () => {
  it('sorts object keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1}',
    );
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
  });

  it('differs for every part of the scope and for raw bodies', () => {
    const key = exactCacheKey(req({ x: 1 }));
    const variants: Array<Partial<CacheRequest>> = [
      { organisationId: 'o2' },
      { workspaceId: null },
      { namespace: 'n' },
      { endpoint: '/v1/embeddings' },
      { route: 'r2' },
    ];
    for (const variant of variants) expect(exactCacheKey(req({ x: 1 }, variant))).not.toBe(key);
    expect(exactCacheKey(req(Buffer.from('{"x":1}')))).not.toBe(key);
    expect(exactCacheKey(req(Buffer.from('abc')))).toBe(exactCacheKey(req(Buffer.from('abc'))));
    // An empty namespace is the default namespace.
    expect(exactCacheKey(req({ x: 1 }, { namespace: '' }))).toBe(key);
  });

  it('splits a chat body into the last user text and a partition of everything else', () => {
    const messages = [
      { role: 'system', content: 's' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
        name: 'u1',
      },
    ];
    const split = splitForSemantic(req({ model: 'm', messages }), 'emb');
    expect(split?.text).toBe('a\nb');
    const sameButText = splitForSemantic(
      req({ model: 'm', messages: [messages[0], { role: 'user', content: 'other', name: 'u1' }] }),
      'emb',
    );
    expect(sameButText?.partitionKey).toBe(split?.partitionKey);
    const otherName = splitForSemantic(
      req({ model: 'm', messages: [messages[0], { role: 'user', content: 'other', name: 'u2' }] }),
      'emb',
    );
    expect(otherName?.partitionKey).not.toBe(split?.partitionKey);
    expect(splitForSemantic(req({ model: 'm', messages }), 'emb-2')?.partitionKey).not.toBe(split?.partitionKey);
  });

  it('refuses bodies that cannot be compared by meaning', () => {
    expect(splitForSemantic(req({ model: 'm', messages: [] }), 'e')).toBeNull();
    expect(splitForSemantic(req({ model: 'm', messages: [{ role: 'assistant', content: 'x' }] }), 'e')).toBeNull();
    expect(splitForSemantic(req({ model: 'm', messages: [{ role: 'user', content: '  ' }] }), 'e')).toBeNull();
    expect(
      splitForSemantic(
        req({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }),
        'e',
      ),
    ).toBeNull();
    expect(splitForSemantic(req({ model: 'm', prompt: 'x' }), 'e')).toBeNull();
    expect(splitForSemantic(req(Buffer.from('x')), 'e')).toBeNull();
  });
});
