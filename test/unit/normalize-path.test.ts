import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exceedsJsonDepth } from '../../src/lib/json-depth.js';
import { normalizeRequestUrl } from '../../src/server/normalize-path.js';

describe('normalizeRequestUrl', () => {
  it('collapses slashes and drops a trailing one, leaving the query alone', () => {
    expect(normalizeRequestUrl('/v1//chat///completions/?a=b//c')).toEqual({
      ok: true,
      url: '/v1/chat/completions?a=b//c',
    });
    expect(normalizeRequestUrl('/')).toEqual({ ok: true, url: '/' });
    expect(normalizeRequestUrl('//')).toEqual({ ok: true, url: '/' });
  });

  it('refuses dot segments, encoded slashes, backslashes and bad encodings, with a routable spelling', () => {
    for (const path of [
      '/v1/a/../b',
      '/v1/./a',
      '/v1/%2e%2E/a',
      '/v1/.%2e',
      '/v1/a%2Fb',
      '/v1/a%5cb',
      '/v1/a\\b',
      '/v1/%zz',
      '/v1/a%',
      '/v1/%ff',
    ]) {
      const verdict = normalizeRequestUrl(`${path}?q=1`);
      expect(verdict.ok, path).toBe(false);
      expect(() => decodeURIComponent(verdict.url), path).not.toThrow();
    }
  });

  it('keeps encoded slashes inside ids where the caller says the path is never forwarded', () => {
    const controlPlane = { keepsEncodedSlashes: (path: string) => path.startsWith('/v1/model-configs/') };
    expect(normalizeRequestUrl('/v1/model-configs/pricing/groq/meta-llama%2Fllama-4', controlPlane)).toEqual({
      ok: true,
      url: '/v1/model-configs/pricing/groq/meta-llama%2Fllama-4',
    });
    expect(normalizeRequestUrl('/v1/files/a%2F..%2Fb', controlPlane).ok).toBe(false);
    expect(normalizeRequestUrl('/v1/model-configs/a/../b', controlPlane).ok).toBe(false);
  });

  it('never lets a dot segment or an encoded slash through, whatever the path', () => {
    const segment = fc.stringMatching(/^[a-zA-Z0-9.%\\/2eEfFcC5]{0,12}$/);
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 6 }), (parts) => {
        const verdict = normalizeRequestUrl(`/${parts.join('/')}`);
        if (!verdict.ok) return;
        const decoded = decodeURIComponent(verdict.url);
        expect(decoded.split('/').some((s) => s === '.' || s === '..')).toBe(false);
        expect(decoded.split('/').length).toBe(verdict.url.split('/').length);
        expect(verdict.url.includes('//')).toBe(false);
      }),
    );
  });
});

describe('exceedsJsonDepth', () => {
  it('counts nesting outside strings only, on text and bytes', () => {
    expect(exceedsJsonDepth('[[[]]]', 3)).toBe(false);
    expect(exceedsJsonDepth('[[[[]]]]', 3)).toBe(true);
    expect(exceedsJsonDepth(Buffer.from('{"a":{"b":[1]}}'), 3)).toBe(false);
    expect(exceedsJsonDepth('{"a":"[[[[[[\\"[[["}', 1)).toBe(false);
    expect(exceedsJsonDepth('[{}, {}, {}, []]', 2)).toBe(false);
  });

  it('agrees with the depth of any JSON value', () => {
    const depthOf = (v: unknown): number =>
      v !== null && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0;
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 9 }), (value, max) => {
        const text = JSON.stringify(value);
        expect(exceedsJsonDepth(text, max)).toBe(depthOf(value) > max);
        expect(exceedsJsonDepth(Buffer.from(text), max)).toBe(depthOf(value) > max);
      }),
    );
  });
});
