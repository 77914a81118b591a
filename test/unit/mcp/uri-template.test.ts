import { describe, expect, it } from 'vitest';
import { templateMatcher } from '../../../src/mcp/uri-template.js';

describe('templateMatcher', () => {
  it('matches what each RFC 6570 operator can expand to, and nothing more', () => {
    expect(templateMatcher('files://{name}').test('files://notes')).toBe(true);
    expect(templateMatcher('files://{name}').test('files://a/b')).toBe(false);
    expect(templateMatcher('files://{+path}').test('files://a/b/c')).toBe(true);
    expect(templateMatcher('repo://{owner}/{repo}/issues').test('repo://ada/engine/issues')).toBe(true);
    expect(templateMatcher('repo://{owner}/{repo}/issues').test('repo://ada/engine/pulls')).toBe(false);
    expect(templateMatcher('search://q{?term,page}').test('search://q?term=x&page=2')).toBe(true);
    expect(templateMatcher('search://q{?term,page}').test('search://q')).toBe(true);
    expect(templateMatcher('docs://{/segments}').test('docs:///a/b')).toBe(true);
  });

  it('takes the literal parts literally', () => {
    expect(templateMatcher('a.b://{x}').test('aXb://y')).toBe(false);
    expect(templateMatcher('data://(x)/{id}').test('data://(x)/7')).toBe(true);
  });
});
