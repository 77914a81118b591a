import { describe, expect, it } from 'vitest';
import { backoffDelay, retryAfterMs } from '../../src/gateway/routing/backoff.js';
import { firstMatch, type ConditionFacts } from '../../src/gateway/routing/conditions.js';
import type { ConditionQuery } from '../../src/gateway/config/schema.js';

/** Whether one condition with this query is the one that matches. */
const matchesQuery = async (query: ConditionQuery, facts: ConditionFacts) =>
  (await firstMatch([{ query, then: 'x' }], facts)) !== undefined;

const facts = {
  metadata: { tier: 'pro', retries: '3', region: 'eu-west-1' },
  params: { model: 'gpt-4o', temperature: 0.2, nested: { flag: true } },
};

describe('condition queries', () => {
  it.each([
    [{ 'metadata.tier': 'pro' }, true],
    [{ 'metadata.tier': { $eq: 'free' } }, false],
    [{ 'metadata.tier': { $ne: 'free' } }, true],
    [{ 'metadata.retries': { $gt: 2 } }, true],
    [{ 'metadata.retries': { $gte: 3, $lt: 4 } }, true],
    [{ 'metadata.retries': { $lte: 2 } }, false],
    [{ 'params.temperature': { $lt: 0.5 } }, true],
    [{ 'params.model': { $in: ['gpt-4o', 'o3'] } }, true],
    [{ 'params.model': { $nin: ['gpt-4o'] } }, false],
    [{ 'metadata.region': { $regex: '^eu-' } }, true],
    [{ 'params.nested.flag': true }, true],
    [{ 'metadata.absent': { $ne: 'x' } }, true],
    [{ 'metadata.absent': { $eq: null } }, true],
    [{ 'metadata.absent': { $gt: 1 } }, false],
    [{ 'metadata.absent': 'x' }, false],
    [{ $and: [{ 'metadata.tier': 'pro' }, { 'params.model': 'gpt-4o' }] }, true],
    [{ $and: [{ 'metadata.tier': 'pro' }, { 'params.model': 'o3' }] }, false],
    [{ $or: [{ 'metadata.tier': 'free' }, { 'params.model': 'gpt-4o' }] }, true],
    [{ $or: [{ 'metadata.tier': 'free' }, { 'params.model': 'o3' }] }, false],
    [{ 'metadata.tier': 'pro', 'params.model': 'o3' }, false],
  ])('%j → %s', async (query, expected) => {
    expect(await matchesQuery(query as never, facts)).toBe(expected);
  });

  it('matches nothing on params when the request has no JSON body', async () => {
    expect(await matchesQuery({ 'params.model': { $ne: 'x' } }, { metadata: null, params: null })).toBe(true);
    expect(await matchesQuery({ 'params.model': 'x' }, { metadata: null, params: null })).toBe(false);
  });

  it('answers at once without patterns, or with patterns whose work is bounded', () => {
    const conditions = [
      { query: { 'metadata.tier': 'free' }, then: 'a' },
      { query: { 'metadata.region': { $regex: '^eu-' } }, then: 'b' },
    ];
    expect(firstMatch(conditions, facts)).toEqual(conditions[1]);
  });

  it('tests other patterns on the regex worker, in the order the conditions are written', async () => {
    const conditions = [
      { query: { 'params.model': { $regex: '^(o3|claude)' } }, then: 'a' },
      { query: { $or: [{ 'metadata.tier': 'free' }, { 'params.model': { $regex: '^gpt-(4o|5)$' } }] }, then: 'b' },
      { query: { 'params.model': { $regex: '(gpt|o)' } }, then: 'c' },
    ];
    const answer = firstMatch(conditions, facts);
    expect(answer).toBeInstanceOf(Promise);
    expect(await answer).toEqual(conditions[1]);
  });

  // A client's inline config chooses both the pattern and the text it runs on.
  it('does not hold the event loop for a pattern that backtracks: past its time limit it does not match', async () => {
    const runaway = { 'params.user': { $regex: '^(a+)+$' } };
    const answer = firstMatch(
      [
        { query: runaway, then: 'a' },
        { query: { 'params.user': { $regex: '^a' } }, then: 'b' },
      ],
      {
        metadata: null,
        params: { user: `${'a'.repeat(40)}!` },
      },
    );
    let turns = 0;
    const ticking = setInterval(() => turns++, 5);
    try {
      expect((await answer)?.then).toBe('b');
    } finally {
      clearInterval(ticking);
    }
    expect(turns).toBeGreaterThan(0); // the event loop ran while the worker was busy
  });
});

describe('backoff', () => {
  it('doubles with each retry, jittered between half and the whole delay, and is capped', () => {
    expect(backoffDelay(0, () => 0)).toBe(50);
    expect(backoffDelay(0, () => 1)).toBe(100);
    expect(backoffDelay(3, () => 0.5)).toBe(600);
    expect(backoffDelay(30, () => 1)).toBe(8000);
  });

  it('reads retry-after in seconds, as a date, and retry-after-ms', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs({ 'retry-after': '2' }, now)).toBe(2000);
    expect(retryAfterMs({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }, now)).toBe(5000);
    expect(retryAfterMs({ 'retry-after-ms': '150', 'retry-after': '9' }, now)).toBe(150);
    expect(retryAfterMs({ 'retry-after': 'soon' }, now)).toBeNull();
    expect(retryAfterMs({}, now)).toBeNull();
  });
});
