import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load-config.js';
import { createManualClock } from '../../../src/lib/clock.js';
import { createPricingService } from '../../../src/pricing/create-pricing-service.js';
import { SHIPPED_CAPABILITIES_DIR, SHIPPED_PRICING_DIR } from '../../../src/pricing/local-pricing.js';
import { listProviders } from '../../../src/providers/registry.js';

const shipped = () =>
  createPricingService({
    config: loadConfig({ env: {} }),
    clock: createManualClock(),
    logger: pino({ level: 'silent' }),
  });

describe('shipped defaults (config/pricing, config/capabilities)', () => {
  it('load without error, and every file says where its figures come from and when they were read', () => {
    expect(() => shipped()).not.toThrow();
    for (const dir of [SHIPPED_PRICING_DIR, SHIPPED_CAPABILITIES_DIR]) {
      for (const file of readdirSync(dir).filter((name) => name.endsWith('.json'))) {
        const { $comment } = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { $comment?: string };
        expect($comment, file).toMatch(/https:\/\//);
        expect($comment, file).toMatch(/read \d{4}-\d{2}-\d{2}/);
      }
    }
  });

  it('cover the major providers under their registry ids (anthropic and google are future adapters)', () => {
    const files = readdirSync(SHIPPED_PRICING_DIR).map((name) => name.replace(/\.json$/, ''));
    expect(files.sort()).toEqual([
      'anthropic',
      'cohere',
      'deepseek',
      'google',
      'groq',
      'mistral-ai',
      'openai',
      'together-ai',
      'x-ai',
    ]);
    const registry = new Set(listProviders().map((p) => p.name));
    for (const id of files.filter((id) => id !== 'anthropic' && id !== 'google'))
      expect(registry.has(id), id).toBe(true);
  });

  it('price the common models, dated ids included, and list them for GET /v1/models', async () => {
    const pricing = shipped();
    expect(await pricing.lookupPrice('openai', 'gpt-4o-mini-2024-07-18')).toMatchObject({
      source: 'local',
      entry: 'gpt-4o-mini',
      price: { input: 0.15, output: 0.6, cached_input: 0.075 },
    });
    expect(await pricing.lookupPrice('anthropic', 'claude-haiku-4-5-20251001')).toMatchObject({
      entry: 'claude-haiku-4-5',
      price: { input: 1, output: 5, cached_input: 0.1 },
    });
    expect(await pricing.priceOf('groq', 'openai/gpt-oss-120b')).toMatchObject({ input: 0.15, output: 0.6 });
    expect(await pricing.priceOf('x-ai', 'grok-4.7')).toMatchObject({ input: 2, output: 6, cached_input: 0.5 });
    expect(pricing.models()).toContainEqual({ provider: 'mistral-ai', model: 'mistral-large-latest' });
    expect(await pricing.capabilitiesOf('openai', 'gpt-5.4-mini')).toMatchObject({
      context_window: 400_000,
      max_output_tokens: 128_000,
    });
  });

  it('apply long-prompt rates past the published threshold', async () => {
    const pricing = shipped();
    const usage = (promptTokens: number) => ({ promptTokens, completionTokens: 1000, cachedTokens: 0 });
    expect(await pricing.costOf('openai', 'gpt-5.4', usage(272_000))).toBeCloseTo(
      (272_000 * 2.5 + 1000 * 15) / 1e6,
      12,
    );
    expect(await pricing.costOf('openai', 'gpt-5.4', usage(272_001))).toBeCloseTo(
      (272_001 * 5 + 1000 * 22.5) / 1e6,
      12,
    );
    expect(await pricing.costOf('x-ai', 'grok-4.7', usage(200_000))).toBeCloseTo((200_000 * 4 + 1000 * 12) / 1e6, 12);
  });
});
