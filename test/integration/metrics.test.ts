import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import { createMetricsRegistry, MAX_SERIES } from '../../src/admin/observability/metrics/metrics-registry.js';
import { createWorkspaceKey } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\\\|\\"|\\n)*)"(?:,|$)/;

/**
 * A strict reader of the Prometheus text format 0.0.4: every family has HELP and TYPE before
 * its samples, samples of a family are contiguous, labels are well-formed and escaped, and
 * histograms have cumulative buckets ending in +Inf that equal _count, and a _sum.
 */
function parseExposition(text: string): Map<string, Family> {
  expect(text.endsWith('\n')).toBe(true);
  const families = new Map<string, Family>();
  let current: Family | null = null;
  const familyOf = (sample: string) =>
    [sample, sample.replace(/_(bucket|sum|count)$/, '')]
      .map((n) => families.get(n))
      .find((f) => f && (f.name === sample || f.type === 'histogram'));
  for (const line of text.slice(0, -1).split('\n')) {
    const help = /^# HELP (\S+) (.+)$/.exec(line);
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (help) {
      expect(NAME.test(help[1]!), line).toBe(true);
      expect(families.has(help[1]!), `family ${help[1]} declared twice`).toBe(false);
      current = { name: help[1]!, type: '', help: help[2]!, samples: [] };
      families.set(current.name, current);
      continue;
    }
    if (type) {
      expect(current?.name, `TYPE ${type[1]} without HELP just before`).toBe(type[1]);
      current!.type = type[2]!;
      continue;
    }
    const sample = SAMPLE.exec(line);
    expect(sample, `not a sample line: ${JSON.stringify(line)}`).not.toBeNull();
    const [, name, rawLabels = '', rawValue] = sample!;
    const family = familyOf(name!);
    expect(family, `${name} outside its family`).toBe(current);
    const labels: Record<string, string> = {};
    let rest = rawLabels;
    while (rest.length > 0) {
      const label = LABEL.exec(rest);
      expect(label, `bad labels in ${line}`).not.toBeNull();
      expect(labels[label![1]!], `label ${label![1]} twice`).toBeUndefined();
      labels[label![1]!] = label![2]!.replaceAll('\\n', '\n').replaceAll('\\"', '"').replaceAll('\\\\', '\\');
      rest = rest.slice(label![0].length);
    }
    const value = rawValue === '+Inf' ? Infinity : rawValue === '-Inf' ? -Infinity : Number(rawValue);
    expect(Number.isNaN(value) && rawValue !== 'NaN', `bad value in ${line}`).toBe(false);
    current!.samples.push({ name: name!, labels, value });
  }
  for (const family of families.values()) {
    expect(family.type, `${family.name} has no TYPE`).not.toBe('');
    if (family.type === 'counter') expect(family.name.endsWith('_total'), family.name).toBe(true);
    if (family.type === 'histogram') checkHistogram(family);
  }
  return families;
}

function checkHistogram(family: Family): void {
  const key = (labels: Record<string, string>) =>
    JSON.stringify(
      Object.entries(labels)
        .filter(([k]) => k !== 'le')
        .sort(),
    );
  const groups = new Map<string, Sample[]>();
  for (const sample of family.samples)
    groups.set(key(sample.labels), [...(groups.get(key(sample.labels)) ?? []), sample]);
  for (const samples of groups.values()) {
    const buckets = samples.filter((s) => s.name.endsWith('_bucket'));
    const les = buckets.map((b) => (b.labels.le === '+Inf' ? Infinity : Number(b.labels.le)));
    expect(les).toEqual([...les].sort((a, b) => a - b));
    expect(les.at(-1)).toBe(Infinity);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value);
    const count = samples.find((s) => s.name.endsWith('_count'));
    expect(count?.value).toBe(buckets.at(-1)!.value);
    expect(samples.some((s) => s.name.endsWith('_sum'))).toBe(true);
  }
}

const value = (families: Map<string, Family>, name: string, labels: Record<string, string>): number | undefined => {
  const family = families.get(name.replace(/_(bucket|sum|count)$/, '')) ?? families.get(name);
  return family?.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    ?.value;
};

describe('GET /metrics', () => {
  it('counts requests, errors, latency, tokens, cost and limit rejections by provider, model and status class', async () => {
    const gw = await startGateway();
    const chat = (model: string) =>
      gw.admin.post(
        '/v1/chat/completions',
        { model, messages: [{ role: 'user', content: 'x'.repeat(32) }], max_tokens: 5 },
        gw.viaMock,
      );
    for (let i = 0; i < 3; i++) expect((await chat('gpt-4o-mini')).status).toBe(200);
    expect((await chat('gpt-4o')).status).toBe(200);
    expect(
      (
        await gw.admin.post(
          '/v1/chat/completions',
          { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
          { ...gw.viaMock, 'x-service-provider': 'no-such-provider' },
        )
      ).status,
    ).toBe(400);
    const limited = await gw.admin.post('/v1/api-keys/workspace/service', {
      name: 'limited',
      workspace_id: 'default',
      scopes: ['completions.write'],
      rate_limits: [{ type: 'requests', unit: 'rph', value: 1 }],
    });
    const limitedClient = apiClient(gw.baseUrl, limited.body.key);
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
    expect((await limitedClient.post('/v1/chat/completions', body, gw.viaMock)).status).toBe(200);
    expect((await limitedClient.post('/v1/chat/completions', body, gw.viaMock)).status).toBe(429);
    await gw.logs(7);

    const res = await gw.admin.get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const m = parseExposition(res.body);
    // An independent parser of the text format (prom2json's shape) reads the same figures.
    const families = parsePrometheusTextFormat(res.body);
    const family = (name: string) => families.find((f) => f.name === name)!;
    expect(family('svcgw_requests_total').type).toBe('COUNTER');
    expect(
      family('svcgw_requests_total').metrics.find(
        (s) => s.labels?.model === 'gpt-4o-mini' && s.labels?.status_class === '2xx',
      )?.value,
    ).toBe('4');
    expect(family('svcgw_request_duration_seconds').type).toBe('HISTOGRAM');
    expect(
      family('svcgw_tokens_total').metrics.find((s) => s.labels?.model === 'gpt-4o' && s.labels?.type === 'completion')
        ?.value,
    ).toBe('5');
    const mini = { provider: 'openai', model: 'gpt-4o-mini' };
    expect(value(m, 'svcgw_requests_total', { ...mini, status_class: '2xx' })).toBe(4);
    expect(value(m, 'svcgw_requests_total', { provider: 'openai', model: 'gpt-4o', status_class: '2xx' })).toBe(1);
    expect(value(m, 'svcgw_request_errors_total', { ...mini, status_class: '2xx' })).toBe(0);
    // Requests refused before a provider was chosen (unknown provider, rate limit) count under provider "none".
    expect(value(m, 'svcgw_requests_total', { provider: 'none', model: 'gpt-4o', status_class: '4xx' })).toBe(1);
    expect(value(m, 'svcgw_requests_total', { provider: 'none', model: 'gpt-4o-mini', status_class: '4xx' })).toBe(1);
    expect(
      value(m, 'svcgw_request_errors_total', { provider: 'none', model: 'gpt-4o-mini', status_class: '4xx' }),
    ).toBe(1);
    expect(value(m, 'svcgw_request_duration_seconds_count', { ...mini, status_class: '2xx' })).toBe(4);
    expect(value(m, 'svcgw_request_duration_seconds_bucket', { ...mini, status_class: '2xx', le: '+Inf' })).toBe(4);
    expect(value(m, 'svcgw_tokens_total', { provider: 'openai', model: 'gpt-4o', type: 'prompt' })).toBeGreaterThan(0);
    expect(value(m, 'svcgw_tokens_total', { provider: 'openai', model: 'gpt-4o', type: 'completion' })).toBe(5);
    expect(value(m, 'svcgw_cost_usd_total', { provider: 'openai', model: 'gpt-4o' })).toBeGreaterThan(0);
    expect(value(m, 'svcgw_cache_hits_total', mini)).toBe(0);
    expect(value(m, 'svcgw_limit_rejections_total', { kind: 'rate' })).toBe(1);
    expect(value(m, 'svcgw_limit_rejections_total', { kind: 'budget' })).toBe(0);
    expect(m.get('svcgw_build_info')!.samples[0]!.labels.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(res.body).not.toContain(gw.adminKey);
    expect(res.body).not.toContain('provider-secret-key');
  });

  it('needs an admin key with analytics.view when no metrics token is set', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    expect((await apiClient(t.baseUrl).get('/metrics')).status).toBe(401);
    const workspaceKey = await createWorkspaceKey(admin, { workspace_id: 'default', scopes: ['analytics.view'] });
    expect((await apiClient(t.baseUrl, workspaceKey.key).get('/metrics')).body.error.code).toBe('KEY_TYPE_NOT_ALLOWED');
    const noScope = await admin.post('/v1/api-keys/organisation/service', {
      name: 'no analytics',
      scopes: ['logs.list'],
    });
    expect((await apiClient(t.baseUrl, noScope.body.key).get('/metrics')).body.error.code).toBe('MISSING_SCOPE');
  });

  it('with metrics_token: a Bearer token instead of an API key, compared whole', async () => {
    const token = 'metrics-token-0123456789abcdef';
    const t = await startTestServer({ env: { SVCGW_METRICS_TOKEN: token } });
    const get = (headers: Record<string, string>) => apiClient(t.baseUrl).get('/metrics', headers);
    expect((await get({})).status).toBe(401);
    expect((await get({ authorization: `Bearer ${token.slice(0, -1)}` })).status).toBe(401);
    expect((await get({ authorization: `Bearer ${token}x` })).status).toBe(401);
    expect((await get({ 'x-service-api-key': t.adminKey })).status).toBe(401);
    const ok = await get({ authorization: `Bearer ${token}` });
    expect(ok.status).toBe(200);
    parseExposition(ok.body);
    expect(t.logLines.join('\n')).not.toContain(token);
  });

  it("reports the process's CPU and memory under the names Node.js exporters use", async () => {
    const t = await startTestServer();
    const res = await apiClient(t.baseUrl, t.adminKey).get('/metrics');
    expect(res.status).toBe(200);
    const m = parseExposition(res.body);
    const only = (name: string) => m.get(name)!.samples[0]!.value;
    expect(only('process_resident_memory_bytes')).toBeGreaterThan(20 * 1024 * 1024);
    expect(only('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(only('nodejs_heap_size_used_bytes')).toBeLessThanOrEqual(only('nodejs_heap_size_total_bytes'));
    expect(only('process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(only('process_cpu_seconds_total')).toBeCloseTo(
      only('process_cpu_user_seconds_total') + only('process_cpu_system_seconds_total'),
      3,
    );
    const started = only('process_start_time_seconds');
    expect(started).toBeLessThanOrEqual(Date.now() / 1000 + 1);
    expect(started).toBeGreaterThan(Date.now() / 1000 - 3600);
    // The young generation, which `svcgw serve` caps, and the old one, by V8's own space names.
    const young = value(m, 'nodejs_heap_space_size_total_bytes', { space: 'new' });
    expect(young).toBeGreaterThan(0);
    expect(value(m, 'nodejs_heap_space_size_used_bytes', { space: 'old' })).toBeGreaterThan(0);
  });

  it('metrics_enabled=false: GET /metrics is a 404', async () => {
    const t = await startTestServer({ env: { SVCGW_METRICS_ENABLED: 'false' } });
    const res = await apiClient(t.baseUrl, t.adminKey).get('/metrics');
    expect(res.status).toBe(404);
  });

  it('keeps label cardinality bounded: past MAX_SERIES, new models count under "other"', () => {
    const registry = createMetricsRegistry();
    const row = (model: string) =>
      ({
        provider: 'openai',
        model,
        status_code: 200,
        is_success: 1,
        latency_ms: 5,
        cache_status: 'MISS',
        prompt_tokens: 1,
        completion_tokens: 1,
        cost: 0,
      }) as Parameters<typeof registry.record>[0];
    for (let i = 0; i < MAX_SERIES + 50; i++) registry.record(row(`made-up-model-${i}`));
    expect(registry.seriesCount).toBe(MAX_SERIES + 1);
    expect(registry.render({ version: '0.0.0' })).toContain(
      'svcgw_requests_total{provider="other",model="other",status_class="2xx"} 50\n',
    );
  });

  it('labels a model only once a provider has answered it: invented names on refused requests count under "other"', () => {
    const registry = createMetricsRegistry();
    const row = (model: string, status: number) =>
      ({
        provider: status === 400 ? 'none' : 'openai',
        model,
        status_code: status,
        is_success: status < 400 ? 1 : 0,
        latency_ms: 5,
        cache_status: 'MISS',
        prompt_tokens: null,
        completion_tokens: null,
        cost: null,
      }) as Parameters<typeof registry.record>[0];
    for (let i = 0; i < 5000; i++) registry.record(row(`typo-${i}`, i % 2 ? 400 : 404));
    registry.record(row('gpt-4o', 500)); // not answered yet: a provider failing from the start
    registry.record(row('gpt-4o', 200));
    registry.record(row('gpt-4o', 429));
    const page = registry.render({ version: '0.0.0' });
    expect(page).not.toContain('typo-');
    expect(page).toContain('svcgw_requests_total{provider="none",model="other",status_class="4xx"} 2500\n');
    expect(page).toContain('svcgw_requests_total{provider="openai",model="other",status_class="4xx"} 2500\n');
    expect(page).toContain('svcgw_requests_total{provider="openai",model="other",status_class="5xx"} 1\n');
    expect(page).toContain('svcgw_requests_total{provider="openai",model="gpt-4o",status_class="4xx"} 1\n');
    expect(registry.seriesCount).toBe(5);
  });
});
