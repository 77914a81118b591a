import { describe, expect, it } from 'vitest';
import { AppError } from '../../../../src/lib/errors.js';
import { parseGatewayConfig } from '../../../../src/gateway/config/index.js';
import type { GatewayConfig } from '../../../../src/gateway/config/schema.js';
import { route, type AttemptOutcome, type Leaf } from '../../../../src/gateway/routing/router.js';

function config(value: unknown): GatewayConfig {
  const parsed = parseGatewayConfig(value);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.config;
}

const target = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  provider: 'openai',
  api_key: 'sk-test',
  ...extra,
});

/**
 * The router with each target's answers scripted by its label: a status, or 'down' for no answer.
 * Records what was tried and what was dropped, in order.
 */
function scripted(answers: Record<string, Array<number | 'down'>>, options: { goneAfter?: number } = {}) {
  const tried: string[] = [];
  const discarded: string[] = [];
  const hooks = {
    attempt(leaf: Leaf): Promise<AttemptOutcome<string> & { provider: string | null }> {
      tried.push(leaf.label);
      const next = answers[leaf.label]?.shift() ?? 200;
      if (next === 'down')
        return Promise.resolve({
          ok: false as const,
          error: new AppError('UPSTREAM_UNREACHABLE', 'down'),
          provider: 'openai',
        });
      return Promise.resolve({
        ok: true as const,
        status: next,
        response: `${leaf.label}#${tried.length}`,
        retryAfterMs: null,
        provider: 'openai',
      });
    },
    discard: (response: string) => discarded.push(response),
    sleep: () => Promise.resolve(),
    random: () => 0,
    cancelled: () => options.goneAfter !== undefined && tried.length >= options.goneAfter,
  };
  return { hooks, tried, discarded };
}

describe('route: fallback', () => {
  it('serves from the first target that answers well, dropping the answers it moved on from', async () => {
    const { hooks, tried, discarded } = scripted({ a: [503], b: ['down'], c: [200] });
    const result = await route(
      config({ strategy: { mode: 'fallback' }, targets: [target('a'), target('b'), target('c')] }),
      { metadata: null, params: null },
      hooks,
    );
    expect(tried).toEqual(['a', 'b', 'c']);
    expect(discarded).toEqual(['a#1']); // the failed connection left nothing to drop
    expect(result.leaf.label).toBe('c');
    expect(result.outcome).toMatchObject({ ok: true, status: 200, response: 'c#3' });
    expect(
      result.attempts.map(({ target, path, status, error_code }) => ({ target, path, status, error_code })),
    ).toEqual([
      { target: 'a', path: 'targets[0]', status: 503, error_code: undefined },
      { target: 'b', path: 'targets[1]', status: null, error_code: 'UPSTREAM_UNREACHABLE' },
      { target: 'c', path: 'targets[2]', status: 200, error_code: undefined },
    ]);
  });

  it('the first answer served is the only attempt when it is good', async () => {
    const { hooks, tried, discarded } = scripted({ primary: [200] });
    const result = await route(
      config({ strategy: { mode: 'fallback' }, targets: [target('primary'), target('secondary')] }),
      { metadata: null, params: null },
      hooks,
    );
    expect(tried).toEqual(['primary']);
    expect(discarded).toEqual([]);
    expect(result.leaf.label).toBe('primary');
    expect(JSON.parse(JSON.stringify(result.attempts))).toEqual([
      { target: 'primary', path: 'targets[0]', provider: 'openai', status: 200, latency_ms: expect.any(Number) },
    ]);
  });

  it('moves on only for on_status_codes, and returns the last failure when every target fails', async () => {
    const listed = scripted({ a: [400], b: [429] });
    const kept = await route(
      config({ strategy: { mode: 'fallback', on_status_codes: [429] }, targets: [target('a'), target('b')] }),
      { metadata: null, params: null },
      listed.hooks,
    );
    expect(listed.tried).toEqual(['a']);
    expect(kept.outcome).toMatchObject({ ok: true, status: 400 });

    const all = scripted({ a: [500], b: [502] });
    const last = await route(
      config({ strategy: { mode: 'fallback' }, targets: [target('a'), target('b')] }),
      { metadata: null, params: null },
      all.hooks,
    );
    expect(all.tried).toEqual(['a', 'b']);
    expect(all.discarded).toEqual(['a#1']);
    expect(last.leaf.label).toBe('b');
    expect(last.outcome).toMatchObject({ ok: true, status: 502, response: 'b#2' });
  });

  it('tries no further target once the client has gone', async () => {
    const { hooks, tried } = scripted({ a: [503] }, { goneAfter: 1 });
    const result = await route(
      config({ strategy: { mode: 'fallback' }, targets: [target('a'), target('b')] }),
      { metadata: null, params: null },
      hooks,
    );
    expect(tried).toEqual(['a']);
    expect(result.outcome).toMatchObject({ ok: true, status: 503 });
  });

  it('nested nodes: labels and paths of the leaves, retries inside a fallback', async () => {
    const { hooks, tried } = scripted({ 'targets[0].targets[0]': [500, 500], b: [200] });
    const result = await route(
      config({
        strategy: { mode: 'fallback' },
        targets: [
          { strategy: { mode: 'single' }, retry: { attempts: 1 }, targets: [target('x', { name: undefined })] },
          target('b'),
        ],
      }),
      { metadata: null, params: null },
      hooks,
    );
    expect(tried).toEqual(['targets[0].targets[0]', 'targets[0].targets[0]', 'b']);
    expect(result.attempts.map((a) => [a.target, a.path])).toEqual([
      ['targets[0].targets[0]', undefined],
      ['targets[0].targets[0]', undefined],
      ['b', 'targets[1]'],
    ]);
  });
});

describe('route: a config routes many requests', () => {
  it('each request picks afresh and records only its own attempts, with the same labels and paths', async () => {
    const cfg = config({
      strategy: {
        mode: 'conditional',
        conditions: [{ query: { 'metadata.tier': { $eq: 'gold' } }, then: 'lb' }],
        default: 'fb',
      },
      targets: [
        { name: 'lb', strategy: { mode: 'loadbalance' }, targets: [target('l0'), target('l1')] },
        { name: 'fb', strategy: { mode: 'fallback' }, targets: [target('f0'), { provider: 'openai', api_key: 'k' }] },
      ],
    });
    const gold = { metadata: { tier: 'gold' }, params: null };
    const first = scripted({});
    first.hooks.random = () => 0;
    const second = scripted({});
    second.hooks.random = () => 0.99;
    const third = scripted({ f0: [503] });
    const results = [
      await route(cfg, gold, first.hooks),
      await route(cfg, gold, second.hooks),
      await route(cfg, { metadata: { tier: 'free' }, params: null }, third.hooks),
    ];
    expect([first.tried, second.tried, third.tried]).toEqual([['l0'], ['l1'], ['f0', 'fb.targets[1]']]);
    expect(results.map((r) => r.attempts.map((a) => [a.target, a.path, a.status]))).toEqual([
      [['l0', 'targets[0].targets[0]', 200]],
      [['l1', 'targets[0].targets[1]', 200]],
      [
        ['f0', 'targets[1].targets[0]', 503],
        ['fb.targets[1]', 'targets[1].targets[1]', 200],
      ],
    ]);
    expect(results[2]!.leaf.label).toBe('fb.targets[1]');
  });
});
