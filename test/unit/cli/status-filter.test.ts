import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { serverStatusCode, statusFilter, statusList, statusMatches } from '../../../src/cli/status-filter.js';

describe('CLI --status', () => {
  it('reads one code or a class', () => {
    expect(statusFilter('429')).toEqual({ code: 429 });
    expect(statusFilter('5xx')).toEqual({ class: 5 });
    expect(statusFilter('4XX')).toEqual({ class: 4 });
    for (const bad of ['6xx', '42', '5x', 'error', '600'])
      expect(() => statusFilter(bad)).toThrow(InvalidArgumentError);
  });

  it('a class matches its hundred codes and only them; a code is left to the server', () => {
    const fiveHundreds = statusFilter('5xx');
    expect([499, 500, 503, 599, 200].map((c) => statusMatches(fiveHundreds, c))).toEqual([
      false,
      true,
      true,
      true,
      false,
    ]);
    expect(serverStatusCode(fiveHundreds)).toBeUndefined();
    expect(serverStatusCode(statusFilter('429'))).toBe(429);
  });

  it('a list expands classes to codes, without duplicates', () => {
    const codes = statusList('429,5xx');
    expect(codes).toHaveLength(101);
    expect(codes.slice(0, 3)).toEqual([429, 500, 501]);
    expect(statusList('500', statusList('5xx'))).toHaveLength(100);
  });
});
