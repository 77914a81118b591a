import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../../../src/config/load-config.js';
import { createManualClock } from '../../../src/lib/clock.js';
import {
  createPricingService,
  PRICE_CACHE_TTL_MS,
  PRICE_MISS_TTL_MS,
} from '../../../src/pricing/create-pricing-service.js';
import { createLogger } from '../../../src/telemetry/logger.js';
import { referencePrice, startFakeProxy } from '../../helpers/fake-pricing-proxy.js';

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svcgw-pricing-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function writeJson(dir: string, file: string, content: unknown): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, file), JSON.stringify(content));
}

const ours = (models: Record<string, { input: number; output: number; cached_input?: number }>) => ({
  currency: 'USD',
  models,
});

/** A pricing service over temp dirs (and a fake proxy when given), with a manual clock and captured logs. */
function service(
  options: {
    proxyUrl?: string;
    logStore?: string;
    local?: string;
    capabilitiesLocal?: string;
    capabilitiesLogStore?: string;
    proxyTimeoutMs?: number;
  } = {},
) {
  const env: Record<string, string> = {
    MODEL_CONFIGS_PRICING_LOCAL_PATH: options.local ?? tempDir(),
    MODEL_CONFIGS_CAPABILITIES_LOCAL_PATH: options.capabilitiesLocal ?? tempDir(),
  };
  if (options.proxyUrl)
    Object.assign(env, { MODEL_CONFIGS_PROXY_FETCH_ENABLED: 'ON', MODEL_CONFIGS_PROXY_URL: options.proxyUrl });
  if (options.logStore) env.MODEL_CONFIGS_PRICING_LOG_STORE_PATH = options.logStore;
  if (options.capabilitiesLogStore) env.MODEL_CONFIGS_CAPABILITIES_LOG_STORE_PATH = options.capabilitiesLogStore;
  const config = loadConfig({ env });
  const clock = createManualClock();
  const lines: any[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line)),
      );
      callback();
    },
  });
  const logger = createLogger({ level: 'debug', pretty: false, destination });
  const pricing = createPricingService({
    config,
    clock,
    logger,
    ...(options.proxyTimeoutMs ? { proxyTimeoutMs: options.proxyTimeoutMs } : {}),
  });
  const warnings = () => lines.filter((line) => line.level === 40);
  return { pricing, clock, lines, warnings };
}

async function proxy(answers: Parameters<typeof startFakeProxy>[0] = {}) {
  const p = await startFakeProxy(answers);
  onTestFinished(() => p.close());
  return p;
}

describe('pricing sources, in the spec order', () => {
  it('prefers the proxy, then the log store, then the local files, model by model', async () => {
    const p = await proxy({
      '/pricing/openai': { status: 200, body: { 'gpt-4o': referencePrice(0.0003, 0.0012, 0.00015) } },
    });
    const logStore = tempDir();
    writeJson(
      logStore,
      'openai.json',
      ours({ 'gpt-4o': { input: 9, output: 9 }, 'gpt-4.1': { input: 2.2, output: 8.8 } }),
    );
    const local = tempDir();
    writeJson(
      local,
      'openai.json',
      ours({
        'gpt-4o': { input: 1, output: 1 },
        'gpt-4.1': { input: 1, output: 1 },
        'gpt-3.5-turbo': { input: 0.5, output: 1.5 },
      }),
    );
    const { pricing } = service({ proxyUrl: p.url, logStore, local });

    expect(await pricing.lookupPrice('openai', 'gpt-4o')).toMatchObject({
      source: 'proxy',
      price: { input: 3, output: 12, cached_input: 1.5 },
    });
    expect(await pricing.lookupPrice('openai', 'gpt-4.1')).toMatchObject({
      source: 'log_store',
      price: { input: 2.2, output: 8.8 },
    });
    expect(await pricing.lookupPrice('openai', 'gpt-3.5-turbo')).toMatchObject({
      source: 'local',
      price: { input: 0.5, output: 1.5 },
    });
    expect(await pricing.lookupPrice('openai', 'no-such-model')).toBeNull();
    // One proxy document served every model of the provider.
    expect(p.hits).toEqual(['/pricing/openai']);
  });

  it('does not ask the proxy when MODEL_CONFIGS_PROXY_FETCH_ENABLED is off', async () => {
    const local = tempDir();
    writeJson(local, 'openai.json', ours({ 'gpt-4o': { input: 2.5, output: 10 } }));
    const { pricing } = service({ local });
    expect(await pricing.lookupPrice('openai', 'gpt-4o')).toMatchObject({ source: 'local' });
  });

  it('prices dated model ids as their undated entry, in every source', async () => {
    const p = await proxy({
      '/pricing/anthropic': { status: 200, body: { 'claude-opus-4-1': referencePrice(0.0015, 0.0075) } },
    });
    const local = tempDir();
    writeJson(local, 'anthropic.json', ours({}));
    writeJson(
      local,
      'openai.json',
      ours({ 'gpt-4o': { input: 2.5, output: 10 }, 'gpt-4o-2024-05-13': { input: 5, output: 15 } }),
    );
    const { pricing } = service({ proxyUrl: p.url, local });
    expect(await pricing.lookupPrice('anthropic', 'claude-opus-4-1-20250805')).toMatchObject({
      entry: 'claude-opus-4-1',
      source: 'proxy',
      price: { input: 15, output: 75 },
    });
    expect(await pricing.lookupPrice('openai', 'gpt-4o-2024-08-06')).toMatchObject({
      entry: 'gpt-4o',
      price: { input: 2.5 },
    });
    // A dated id with its own entry keeps its own price.
    expect(await pricing.lookupPrice('openai', 'gpt-4o-2024-05-13')).toMatchObject({
      entry: 'gpt-4o-2024-05-13',
      price: { input: 5 },
    });
  });

  it('records an unknown cost (null), never 0, for a model no source prices', async () => {
    const { pricing } = service();
    expect(
      await pricing.costOf('openai', 'gpt-unknown', { promptTokens: 10, completionTokens: 5, cachedTokens: null }),
    ).toBeNull();
    expect(
      await pricing.costOf(null, 'gpt-4o', { promptTokens: 10, completionTokens: 5, cachedTokens: null }),
    ).toBeNull();
  });

  it('computes the cost from the price that applies', async () => {
    const p = await proxy({
      '/pricing/openai': { status: 200, body: { 'gpt-4o': referencePrice(0.0003, 0.0012, 0.00015) } },
    });
    const { pricing } = service({ proxyUrl: p.url });
    const cost = await pricing.costOf('openai', 'gpt-4o', {
      promptTokens: 1000,
      completionTokens: 100,
      cachedTokens: 200,
    });
    expect(cost).toBeCloseTo((800 * 3 + 200 * 1.5 + 100 * 12) / 1e6, 15);
  });
});

describe('the memory cache', () => {
  it('answers from memory for an hour, on the injected clock, then asks the sources again', async () => {
    const p = await proxy({ '/pricing/openai': { status: 200, body: { 'gpt-4o': referencePrice(0.0003, 0.0012) } } });
    const { pricing, clock } = service({ proxyUrl: p.url });
    expect((await pricing.priceOf('openai', 'gpt-4o'))?.input).toBe(3);

    p.answers['/pricing/openai'] = { status: 200, body: { 'gpt-4o': referencePrice(0.0004, 0.0016) } };
    clock.advance(PRICE_CACHE_TTL_MS - 1);
    expect((await pricing.priceOf('openai', 'gpt-4o'))?.input).toBe(3);
    expect(await pricing.lookupPrice('openai', 'gpt-4o')).toMatchObject({ source: 'proxy' }); // the cache names the source it came from
    expect(p.hits).toHaveLength(1);

    clock.advance(1);
    expect((await pricing.priceOf('openai', 'gpt-4o'))?.input).toBe(4);
    expect(p.hits).toHaveLength(2);
  });

  it('remembers a miss for a shorter time, so an unknown model does not reach the sources on every request', async () => {
    const logStore = tempDir();
    const { pricing, clock } = service({ logStore });
    expect(await pricing.priceOf('openai', 'gpt-new')).toBeNull();
    writeJson(logStore, 'openai.json', ours({ 'gpt-new': { input: 1, output: 2 } }));
    clock.advance(PRICE_MISS_TTL_MS - 1);
    expect(await pricing.priceOf('openai', 'gpt-new')).toBeNull();
    clock.advance(1);
    expect(await pricing.lookupPrice('openai', 'gpt-new')).toMatchObject({
      source: 'log_store',
      price: { input: 1, output: 2 },
    });
    expect(PRICE_MISS_TTL_MS).toBeLessThan(PRICE_CACHE_TTL_MS);
  });

  it('asks the proxy once for concurrent lookups of one provider', async () => {
    const p = await proxy({
      '/pricing/openai': {
        status: 200,
        body: { 'gpt-4o': referencePrice(0.0003, 0.0012), 'gpt-4.1': referencePrice(0.0002, 0.0008) },
      },
    });
    const { pricing } = service({ proxyUrl: p.url });
    const results = await Promise.all([
      pricing.priceOf('openai', 'gpt-4o'),
      pricing.priceOf('openai', 'gpt-4.1'),
      pricing.priceOf('openai', 'gpt-4o'),
    ]);
    expect(results.map((r) => r?.input)).toEqual([3, 2, 3]);
    expect(p.hits).toEqual(['/pricing/openai']);
  });
});

describe('a failing proxy', () => {
  it('falls through to the next source when the proxy is down, and logs it once per provider per cache period', async () => {
    const p = await proxy();
    const downUrl = p.url;
    await p.close(); // nothing listens there any more: connection refused
    const local = tempDir();
    writeJson(local, 'openai.json', ours({ 'gpt-4o': { input: 2.5, output: 10 } }));
    writeJson(local, 'groq.json', ours({ 'llama-3.1-8b-instant': { input: 0.05, output: 0.08 } }));
    const { pricing, clock, warnings } = service({ proxyUrl: downUrl, local });

    expect(await pricing.lookupPrice('openai', 'gpt-4o')).toMatchObject({ source: 'local', price: { input: 2.5 } });
    expect(
      await pricing.costOf('openai', 'gpt-4.1', { promptTokens: 1, completionTokens: 1, cachedTokens: null }),
    ).toBeNull();
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ provider: 'openai', url: `${downUrl}/pricing/openai` });

    clock.advance(PRICE_MISS_TTL_MS); // retried, fails again: not logged again within the hour
    expect(await pricing.priceOf('openai', 'o3')).toBeNull();
    expect(await pricing.priceOf('groq', 'llama-3.1-8b-instant')).toMatchObject({ input: 0.05 });
    expect(warnings().map((w) => w.provider)).toEqual(['openai', 'groq']);

    clock.advance(PRICE_CACHE_TTL_MS);
    expect(await pricing.priceOf('openai', 'o4-mini')).toBeNull();
    expect(warnings().map((w) => w.provider)).toEqual(['openai', 'groq', 'openai']);
  });

  it('does not wait past the time-out for a proxy that does not answer', async () => {
    const p = await proxy({ '/pricing/openai': 'hang' });
    const local = tempDir();
    writeJson(local, 'openai.json', ours({ 'gpt-4o': { input: 2.5, output: 10 } }));
    const { pricing, warnings } = service({ proxyUrl: p.url, local, proxyTimeoutMs: 150 });
    const started = Date.now();
    expect(await pricing.lookupPrice('openai', 'gpt-4o')).toMatchObject({ source: 'local' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(warnings()[0].reason).toMatch(/no answer within 150 ms/);
  });

  it('falls through on a 5xx, a dropped connection or a body that is not JSON, and retries after a few minutes', async () => {
    const p = await proxy({
      '/pricing/openai': { status: 503, body: { error: 'down' } },
      '/pricing/groq': 'destroy',
      '/pricing/mistral-ai': { status: 200, body: 'not json' },
    });
    const local = tempDir();
    writeJson(local, 'openai.json', ours({ 'gpt-4o': { input: 2.5, output: 10 } }));
    const { pricing, clock, warnings } = service({ proxyUrl: p.url, local });
    expect(await pricing.lookupPrice('openai', 'gpt-4o')).toMatchObject({ source: 'local' });
    expect(await pricing.priceOf('groq', 'llama-3.1-8b-instant')).toBeNull();
    expect(await pricing.priceOf('mistral-ai', 'mistral-small-latest')).toBeNull();
    expect(warnings()).toHaveLength(3);

    p.answers['/pricing/openai'] = { status: 200, body: { 'gpt-4.1': referencePrice(0.0002, 0.0008) } };
    expect(await pricing.priceOf('openai', 'gpt-4.1')).toBeNull(); // failure remembered
    clock.advance(PRICE_MISS_TTL_MS);
    expect(await pricing.lookupPrice('openai', 'gpt-4.1')).toMatchObject({ source: 'proxy', price: { input: 2 } });
  });

  it('treats a 404 as "no prices for that provider", without a warning', async () => {
    const p = await proxy();
    const { pricing, warnings } = service({ proxyUrl: p.url });
    expect(await pricing.priceOf('openai', 'gpt-4o')).toBeNull();
    expect(warnings()).toEqual([]);
  });

  it('sends the proxy only provider ids the gateway knows or has a file for', async () => {
    const p = await proxy();
    const local = tempDir();
    writeJson(local, 'anthropic.json', ours({}));
    const { pricing } = service({ proxyUrl: p.url, local });
    await pricing.priceOf('made-up-provider', 'x');
    await pricing.priceOf('../etc', 'x');
    await pricing.priceOf('anthropic', 'claude-x');
    await pricing.priceOf('openai', 'gpt-x');
    expect(p.hits).toEqual(['/pricing/anthropic', '/pricing/openai']);
  });
});

describe('the log store', () => {
  it('reads a provider file only when present, and skips a broken one with a warning', async () => {
    const logStore = tempDir();
    writeFileSync(join(logStore, 'openai.json'), '{ broken');
    const local = tempDir();
    writeJson(local, 'openai.json', ours({ 'gpt-4o': { input: 2.5, output: 10 } }));
    const { pricing, warnings } = service({ logStore, local });
    expect(await pricing.lookupPrice('openai', 'gpt-4o')).toMatchObject({ source: 'local' });
    expect(await pricing.lookupPrice('groq', 'llama')).toBeNull();
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0].path).toBe(join(logStore, 'openai.json'));
  });

  it('accepts the reference format too', async () => {
    const logStore = tempDir();
    writeJson(logStore, 'groq.json', {
      default: referencePrice(0, 0),
      'llama-3.3-70b-versatile': referencePrice(0.000059, 0.000079),
    });
    const { pricing } = service({ logStore });
    expect(await pricing.lookupPrice('groq', 'llama-3.3-70b-versatile')).toMatchObject({
      source: 'log_store',
      price: { input: 0.59, output: 0.79 },
    });
    expect(await pricing.priceOf('groq', 'default')).toBeNull();
  });
});

describe('local files', () => {
  it('fail start-up with the file name when invalid', () => {
    const local = tempDir();
    writeJson(local, 'openai.json', ours({ 'gpt-4o': { input: 2.5, output: 'ten' as unknown as number } }));
    expect(() => service({ local })).toThrow(/openai\.json is invalid: gpt-4o/);
  });

  it('list their models for GET /v1/models', () => {
    const local = tempDir();
    writeJson(local, 'openai.json', ours({ 'gpt-4o': { input: 2.5, output: 10 } }));
    writeJson(local, 'groq.json', ours({ 'llama-3.1-8b-instant': { input: 0.05, output: 0.08 } }));
    expect(service({ local }).pricing.models()).toEqual([
      { provider: 'groq', model: 'llama-3.1-8b-instant' },
      { provider: 'openai', model: 'gpt-4o' },
    ]);
  });
});

describe('capabilities', () => {
  it('come from {PROXY_URL}/general/{provider}, the capabilities log store, then the local files', async () => {
    const p = await proxy({
      '/general/groq': {
        status: 200,
        body: {
          default: { type: { primary: 'chat' } },
          'llama-3.1-8b-instant': {
            params: [{ key: 'max_tokens', maxValue: 131072 }],
            type: { primary: 'chat', supported: ['tools'] },
          },
        },
      },
    });
    const capabilitiesLogStore = tempDir();
    writeJson(capabilitiesLogStore, 'openai.json', { models: { 'gpt-4.1': { context_window: 1_047_576 } } });
    const capabilitiesLocal = tempDir();
    writeJson(capabilitiesLocal, 'openai.json', {
      models: {
        'gpt-4.1': { context_window: 1 },
        'gpt-4o': { context_window: 128_000, input_modalities: ['text', 'image'] },
      },
    });
    const { pricing } = service({ proxyUrl: p.url, capabilitiesLogStore, capabilitiesLocal });

    expect(await pricing.lookupCapabilities('groq', 'llama-3.1-8b-instant')).toMatchObject({
      source: 'proxy',
      capabilities: { type: 'chat', max_output_tokens: 131072, supports: ['tools'] },
    });
    expect(await pricing.lookupCapabilities('openai', 'gpt-4.1')).toMatchObject({
      source: 'log_store',
      capabilities: { context_window: 1_047_576 },
    });
    expect(await pricing.capabilitiesOf('openai', 'gpt-4o-2024-08-06')).toMatchObject({
      context_window: 128_000,
      input_modalities: ['text', 'image'],
    });
    expect(await pricing.capabilitiesOf('openai', 'unknown')).toBeNull();
    expect(p.hits).toContain('/general/groq');
  });
});
