import { describe, expect, it } from 'vitest';
import { catalogueAllows, limitAllows } from '../../../src/gateway/model-access.js';

const names = (model: string | null, providerSlug: string | null = 'main', alias: string | null = null) => ({
  model,
  providerSlug,
  alias,
});

describe('model limits', () => {
  it('matches the bare name, @slug/model, prefixes ending in * and the alias used', () => {
    expect(limitAllows(['gpt-4o-mini'], names('gpt-4o-mini'))).toBe(true);
    expect(limitAllows(['@main/gpt-4o-mini'], names('gpt-4o-mini'))).toBe(true);
    expect(limitAllows(['@other/gpt-4o-mini'], names('gpt-4o-mini'))).toBe(false);
    expect(limitAllows(['gpt-4o*'], names('gpt-4o-2024-08-06'))).toBe(true);
    expect(limitAllows(['gpt-4o*'], names('gpt-4.1'))).toBe(false);
    expect(limitAllows(['@main/*'], names('anything'))).toBe(true);
    expect(limitAllows(['default-chat'], names('gpt-4o', 'main', 'default-chat'))).toBe(true);
    expect(limitAllows(['default-chat'], names('gpt-4o'))).toBe(false);
    expect(limitAllows(null, names('x'))).toBe(true);
    expect(limitAllows([], names('x'))).toBe(false);
  });

  it('lets an unread model through only a pattern that covers every model of the target', () => {
    expect(limitAllows(['gpt-4o-mini'], names(null))).toBe(false);
    expect(limitAllows(['@main/*'], names(null))).toBe(true);
    expect(limitAllows(['@ma*'], names(null))).toBe(true);
    expect(limitAllows(['@main/gpt*'], names(null))).toBe(false);
    expect(limitAllows(['@main/*'], names(null, null))).toBe(false);
    expect(limitAllows(['*'], names(null, null))).toBe(true);
  });

  it("follows the integration's list: enabled entries, disabled entries, allow_all_models", () => {
    const list = (allowAll: boolean, entries: Array<[string, boolean]>) => ({ allowAll, entries: new Map(entries) });
    expect(catalogueAllows(list(true, []), 'gpt-4o')).toBe(true);
    expect(catalogueAllows(list(true, [['gpt-4o', false]]), 'gpt-4o')).toBe(false);
    expect(catalogueAllows(list(false, [['gpt-4o', true]]), 'gpt-4o')).toBe(true);
    expect(catalogueAllows(list(false, [['gpt-4o', true]]), 'gpt-4.1')).toBe(false);
    expect(catalogueAllows(list(true, []), null)).toBe(true);
    expect(catalogueAllows(list(true, [['gpt-4o', false]]), null)).toBe(false);
    expect(catalogueAllows(list(false, [['gpt-4o', true]]), null)).toBe(false);
    expect(catalogueAllows(null, 'anything')).toBe(true); // a virtual key has no list
  });
});
