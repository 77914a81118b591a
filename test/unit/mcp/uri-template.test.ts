import { describe, expect, it } from 'vitest';
import { templateMatcher } from '../../../src/mcp/uri-template.js';

/** The regular expression templateMatcher built before (exact, but backtracking), as a reference. */
function backtrackingMatcher(template: string): RegExp {
  const expansions: Record<string, string> = {
    '': '[^/?#]*',
    '+': '.*',
    '#': '(?:#.*)?',
    '.': '(?:\\.[^/?#]*)*',
    '/': '(?:/[^/?#]*)*',
    ';': '(?:;[^/?#]*)*',
    '?': '(?:\\?[^#]*)?',
    '&': '(?:&[^#]*)*',
  };
  const escape = (literal: string): string => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  let pattern = '';
  let last = 0;
  for (const match of template.matchAll(/\{([+#./;?&]?)([^}]*)\}/g)) {
    pattern += escape(template.slice(last, match.index)) + expansions[match[1] ?? '']!;
    last = match.index + match[0].length;
  }
  return new RegExp(`^${pattern}${escape(template.slice(last))}$`);
}

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
    expect(templateMatcher('a{b').test('a{b')).toBe(true);
    expect(templateMatcher('a{b').test('ab')).toBe(false);
    expect(templateMatcher('a}{b}').test('a}x')).toBe(true);
  });

  const cases: ReadonlyArray<[template: string, uri: string, matches: boolean]> = [
    // {var}: one segment's worth
    ['x/{a}', 'x/', true],
    ['x/{a}', 'x/a.b;c&d=e', true],
    ['x/{a}', 'x/a/b', false],
    ['x/{a}', 'x/a?b', false],
    ['x/{a}', 'x/a#b', false],
    ['x/{a}{b}', 'x/ab', true],
    ['x/{a}-{b}', 'x/a-b-c', true],
    ['x/{a}-{b}', 'x/ab', false],
    // {+var}: anything on one line
    ['x/{+a}', 'x/a/b?c#d', true],
    ['x/{+a}', 'x/a\nb', false],
    // {#var}: nothing, or a fragment
    ['x{#a}', 'x', true],
    ['x{#a}', 'x#a/b?c#d', true],
    ['x{#a}', 'xa', false],
    ['x{#a}', 'x#a\nb', false],
    // {.var}: nothing, or dot-led labels
    ['x{.a}', 'x', true],
    ['x{.a}', 'x.a.b', true],
    ['x{.a}', 'x..', true],
    ['x{.a}', 'xa', false],
    ['x{.a}', 'x.a/b', false],
    // {/var}: slash-led segments
    ['x{/a}', 'x', true],
    ['x{/a}', 'x/a/b//c', true],
    ['x{/a}', 'xa', false],
    ['x{/a}', 'x/a?b', false],
    // {;var}: nothing, or semicolon-led parameters
    ['x{;a}', 'x', true],
    ['x{;a}', 'x;a=1;b', true],
    ['x{;a}', 'xa', false],
    ['x{;a}', 'x;a/b', false],
    // {?var}: nothing, or a query
    ['x{?a,b}', 'x', true],
    ['x{?a,b}', 'x?a=1&b=/2?', true],
    ['x{?a,b}', 'xa', false],
    ['x{?a,b}', 'x?a#b', false],
    // {&var}: nothing, or query continuations
    ['x?q=1{&a}', 'x?q=1', true],
    ['x?q=1{&a}', 'x?q=1&a=/&b?', true],
    ['x?q=1{&a}', 'x?q=1a', false],
    ['x?q=1{&a}', 'x?q=1&a#b', false],
    // operators RFC 6570 reserves read as simple expressions
    ['x/{=a}', 'x/b', true],
    ['x/{=a}', 'x/b/c', false],
  ];

  it.each(cases)('%j against %j: %s', (template, uri, expected) => {
    expect(templateMatcher(template).test(uri)).toBe(expected);
    expect(backtrackingMatcher(template).test(uri)).toBe(expected);
  });

  it('matches the same URIs as the regular expression it replaced (every URI of up to 5 characters over a small alphabet)', () => {
    const templates = [
      '{a}',
      '{+a}',
      '{#a}',
      '{.a}',
      '{/a}',
      '{;a}',
      '{?a}',
      '{&a}',
      '{a}{b}',
      '{a}-{b}',
      '{a}.{b}',
      '{a}{.b}',
      '{/a}{/b}',
      '{/a}/{b}',
      '{?a}{&b}',
      '{+a}/{b}',
      '{a}{#b}',
      '{a}{?b}{#c}',
      '{;a}{&b}',
      '-{.a}{/b}',
      '{}',
      '{{a}',
    ];
    const alphabet = ['a', '-', '.', '/', ';', '?', '&', '#', '\n', '{'];
    const uris = [''];
    for (let from = 0; uris[from]!.length < 5; from++) for (const c of alphabet) uris.push(uris[from] + c);
    for (const template of templates) {
      const [now, before] = [templateMatcher(template), backtrackingMatcher(template)];
      const differing = uris.filter((uri) => now.test(uri) !== before.test(uri));
      expect(differing, template).toEqual([]);
    }
  });

  describe('answers adversarial URIs in time linear in their length', () => {
    const n = 100_000;
    const adversarial: ReadonlyArray<[template: string, uri: string, matches: boolean]> = [
      ['file:///{name}{.ext}', `file:///x${'.'.repeat(n)}/`, false],
      ['file:///{name}{.ext}', `file:///x${'.'.repeat(n)}`, true],
      ['api/items?q=1{&page}', `api/items?q=1${'&'.repeat(n)}#`, false],
      ['api/items?q=1{&page}', `api/items?q=1${'&'.repeat(n)}`, true],
      ['doc{;params}', `doc${';'.repeat(n)}/`, false],
      ['x{?a}{&b}', `x?${'&'.repeat(n)}#`, false],
      ['x/{a}{b}', `x/${'a'.repeat(n)}/`, false],
      ['x/{a}{b}{c}', `x/${'a'.repeat(n)}/`, false],
      ['x/{a}{b}{c}', `x/${'a'.repeat(n)}`, true],
      ['x/{a}-{b}', `x/${'a-'.repeat(n / 2)}/`, false],
      ['x/{name}.{ext}', `x/${'.'.repeat(n)}/`, false],
      ['x{/a}{/b}', `x${'/'.repeat(n)}?`, false],
    ];
    it.each(adversarial)('%s against %#', (template, uri, expected) => {
      expect(templateMatcher(template).test(uri)).toBe(expected);
    });
  });
});
