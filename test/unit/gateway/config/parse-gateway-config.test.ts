import { describe, expect, it } from 'vitest';
import { MAX_TARGET_DEPTH, parseGatewayConfig } from '../../../../src/gateway/config/index.js';

const issuesOf = (value: unknown) => {
  const result = parseGatewayConfig(value);
  if (result.ok) throw new Error(`expected issues for ${JSON.stringify(value)}`);
  return result.issues;
};
const pathsOf = (value: unknown) => issuesOf(value).map((issue) => issue.path);

const openai = { provider: 'openai', api_key: 'sk-test' };

describe('parseGatewayConfig: valid configs', () => {
  it('accepts every strategy mode, every credential mode and every option', () => {
    const config = {
      strategy: { mode: 'fallback', on_status_codes: [429, 500] },
      retry: { attempts: 3, on_status_codes: [429], use_retry_after_header: true },
      request_timeout: 30_000,
      cache: { mode: 'semantic', max_age: 3600 },
      override_params: { temperature: 0 },
      targets: [
        { provider: '@openai-prod', override_params: { model: 'gpt-4o' } },
        { virtual_key: 'main-258f4d', provider: 'openai' },
        { provider: 'azure-openai', api_key: 'k', azure_entra_scope: 'https://cognitiveservices.azure.com/.default' },
        { provider: 'openai', custom_host: 'http://127.0.0.1:9000/v1' },
        { provider: 'openrouter', anthropic_beta: 'prompt-caching-2024-07-31' },
        {
          strategy: { mode: 'loadbalance' },
          targets: [{ ...openai, weight: 0.7 }, { ...openai, weight: 0 }],
        },
        {
          name: 'router',
          strategy: {
            mode: 'conditional',
            conditions: [
              { query: { 'metadata.tier': { $eq: 'pro' } }, then: 'big' },
              { query: { $or: [{ 'params.model': { $in: ['a', 'b'] } }, { 'metadata.n': { $gte: 3, $lt: 9 } }], $and: [{ 'metadata.x': { $regex: '^a', $ne: 'b', $nin: [1] } }, { 'metadata.y': 'bare' }] }, then: 'small' },
            ],
            default: 'small',
          },
          targets: [{ name: 'big', ...openai }, { name: 'small', provider: '@cheap' }],
        },
      ],
    };
    const result = parseGatewayConfig(config);
    expect(result).toEqual({ ok: true, config });
  });

  it('accepts a single leaf, a settings-only root and single with one target', () => {
    expect(parseGatewayConfig(openai).ok).toBe(true);
    expect(parseGatewayConfig({ cache: { mode: 'simple' }, retry: { attempts: 0 } }).ok).toBe(true);
    expect(parseGatewayConfig({ strategy: { mode: 'single' }, targets: [openai] }).ok).toBe(true);
    expect(parseGatewayConfig({ provider: 'azure', api_key: 'k' }).ok).toBe(true); // alias
  });

  it(`allows ${MAX_TARGET_DEPTH} levels of nesting and no more`, () => {
    const nest = (levels: number): Record<string, unknown> => (levels === 0 ? openai : { strategy: { mode: 'fallback' }, targets: [nest(levels - 1)] });
    expect(parseGatewayConfig(nest(MAX_TARGET_DEPTH)).ok).toBe(true);
    expect(pathsOf(nest(MAX_TARGET_DEPTH + 1))).toEqual(['targets[0].targets[0].targets[0].targets[0].targets[0].targets']);
  });
});

describe('parseGatewayConfig: every AB01 path', () => {
  const cases: Array<[string, unknown, string]> = [
    ['not an object', 'x', ''],
    ['missing config', undefined, ''],
    ['unknown root key', { ...openai, colour: 'blue' }, 'colour'],
    ['unknown target key', { strategy: { mode: 'fallback' }, targets: [openai, { ...openai, extra: 1 }] }, 'targets[1].extra'],
    ['strategy mode', { strategy: { mode: 'random' }, targets: [openai] }, 'strategy.mode'],
    ['unknown strategy key', { strategy: { mode: 'fallback', when: 1 }, targets: [openai] }, 'strategy.when'],
    ['fallback without targets', { strategy: { mode: 'fallback' } }, 'targets'],
    ['loadbalance with empty targets', { strategy: { mode: 'loadbalance' }, targets: [] }, 'targets'],
    ['single with two targets', { strategy: { mode: 'single' }, targets: [openai, openai] }, 'targets'],
    ['targets without strategy', { targets: [openai] }, 'strategy'],
    ['credentials on a strategy node', { strategy: { mode: 'fallback' }, provider: 'openai', targets: [openai] }, 'provider'],
    ['negative weight', { strategy: { mode: 'loadbalance' }, targets: [openai, { ...openai, weight: -1 }] }, 'targets[1].weight'],
    ['weight not a number', { strategy: { mode: 'loadbalance' }, targets: [{ ...openai, weight: '1' }] }, 'targets[0].weight'],
    ['all weights zero', { strategy: { mode: 'loadbalance' }, targets: [{ ...openai, weight: 0 }, { ...openai, weight: 0 }] }, 'targets'],
    ['strategy status code out of range', { strategy: { mode: 'fallback', on_status_codes: [429, 600] }, targets: [openai] }, 'strategy.on_status_codes[1]'],
    ['strategy status code not an integer', { strategy: { mode: 'fallback', on_status_codes: [42.5] }, targets: [openai] }, 'strategy.on_status_codes[0]'],
    ['retry status code', { ...openai, retry: { attempts: 1, on_status_codes: [99] } }, 'retry.on_status_codes[0]'],
    ['retry attempts above 10', { ...openai, retry: { attempts: 11 } }, 'retry.attempts'],
    ['retry attempts negative', { ...openai, retry: { attempts: -1 } }, 'retry.attempts'],
    ['retry attempts missing', { ...openai, retry: {} }, 'retry.attempts'],
    ['retry-after not boolean', { ...openai, retry: { attempts: 1, use_retry_after_header: 'yes' } }, 'retry.use_retry_after_header'],
    ['request_timeout zero', { ...openai, request_timeout: 0 }, 'request_timeout'],
    ['request_timeout fractional', { ...openai, request_timeout: 1.5 }, 'request_timeout'],
    ['cache mode', { ...openai, cache: { mode: 'fuzzy' } }, 'cache.mode'],
    ['cache max_age zero', { ...openai, cache: { mode: 'simple', max_age: 0 } }, 'cache.max_age'],
    ['override_params not an object', { ...openai, override_params: [1] }, 'override_params'],
    ['target without provider', { strategy: { mode: 'fallback' }, targets: [{ api_key: 'k' }] }, 'targets[0].provider'],
    ['empty target', { strategy: { mode: 'fallback' }, targets: [{}] }, 'targets[0].provider'],
    ['unknown provider name', { strategy: { mode: 'fallback' }, targets: [openai, { provider: 'nope-ai', api_key: 'k' }] }, 'targets[1].provider'],
    ['bad stored provider slug', { provider: '@' }, 'provider'],
    ['api_key with a stored provider', { provider: '@prod', api_key: 'k' }, 'api_key'],
    ['api_key with a virtual key', { virtual_key: 'vk', api_key: 'k' }, 'api_key'],
    ['virtual key with a stored provider', { provider: '@prod', virtual_key: 'vk' }, 'virtual_key'],
    ['custom_host without provider', { virtual_key: 'vk', custom_host: 'https://h.example' }, 'custom_host'],
    ['custom_host not http', { provider: 'openai', custom_host: 'ftp://h.example' }, 'custom_host'],
    ['custom_host not a URL', { provider: 'openai', custom_host: 'not a url' }, 'custom_host'],
    ['conditional without conditions', { strategy: { mode: 'conditional', default: 'a' }, targets: [{ name: 'a', ...openai }] }, 'strategy.conditions'],
    ['conditional without default', { strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.a': 'b' }, then: 'a' }] }, targets: [{ name: 'a', ...openai }] }, 'strategy.default'],
    ['then names no target', { strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.a': 'b' }, then: 'zzz' }], default: 'a' }, targets: [{ name: 'a', ...openai }] }, 'strategy.conditions[0].then'],
    ['default names no target', { strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.a': 'b' }, then: 'a' }], default: 'zzz' }, targets: [{ name: 'a', ...openai }] }, 'strategy.default'],
    ['duplicate target names', { strategy: { mode: 'fallback' }, targets: [{ name: 'a', ...openai }, { name: 'a', ...openai }] }, 'targets[1].name'],
    ['conditions outside conditional', { strategy: { mode: 'fallback', conditions: [] }, targets: [openai] }, 'strategy.conditions'],
    ['default outside conditional', { strategy: { mode: 'fallback', default: 'a' }, targets: [openai] }, 'strategy.default'],
    ['query on an unknown field', { strategy: { mode: 'conditional', conditions: [{ query: { model: 'x' }, then: 'a' }], default: 'a' }, targets: [{ name: 'a', ...openai }] }, 'strategy.conditions[0].query.model'],
    ['unknown operator', { strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.a': { $like: 'x' } }, then: 'a' }], default: 'a' }, targets: [{ name: 'a', ...openai }] }, 'strategy.conditions[0].query.metadata.a.$like'],
    ['$in not an array', { strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.a': { $in: 'x' } }, then: 'a' }], default: 'a' }, targets: [{ name: 'a', ...openai }] }, 'strategy.conditions[0].query.metadata.a.$in'],
    ['bad $regex', { strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.a': { $regex: '(' } }, then: 'a' }], default: 'a' }, targets: [{ name: 'a', ...openai }] }, 'strategy.conditions[0].query.metadata.a.$regex'],
    ['empty $or', { strategy: { mode: 'conditional', conditions: [{ query: { $or: [] }, then: 'a' }], default: 'a' }, targets: [{ name: 'a', ...openai }] }, 'strategy.conditions[0].query.$or'],
    ['nested $and item', { strategy: { mode: 'conditional', conditions: [{ query: { $and: [{ 'metadata.a': 1 }, { 'metadata.b': { $gt: true } }] }, then: 'a' }], default: 'a' }, targets: [{ name: 'a', ...openai }] }, 'strategy.conditions[0].query.$and[1].metadata.b.$gt'],
    ['empty query', { strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'a' }], default: 'a' }, targets: [{ name: 'a', ...openai }] }, 'strategy.conditions[0].query'],
    ['azure_entra_scope empty', { ...openai, azure_entra_scope: '' }, 'azure_entra_scope'],
    ['anthropic_beta not a string', { ...openai, anthropic_beta: 1 }, 'anthropic_beta'],
    ['problem in a nested target', { strategy: { mode: 'fallback' }, targets: [openai, { strategy: { mode: 'fallback' }, targets: [openai, { ...openai, request_timeout: -5 }] }] }, 'targets[1].targets[1].request_timeout'],
  ];

  it.each(cases)('%s', (_label, value, path) => {
    const issues = issuesOf(value);
    expect(issues[0]?.path).toBe(path);
    for (const issue of issues) expect(issue.message.length).toBeGreaterThan(0);
  });

  it('lists every problem, not only the first', () => {
    const issues = issuesOf({ cache: { mode: 'x' }, retry: { attempts: 99 }, strategy: { mode: 'fallback' }, targets: [{ provider: 'nope' }, { ...openai, weight: -1 }] });
    expect(issues.map((i) => i.path)).toEqual(['retry.attempts', 'cache.mode', 'targets[0].provider', 'targets[1].weight']);
  });
});
