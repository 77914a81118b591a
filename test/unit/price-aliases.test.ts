import { describe, expect, it } from 'vitest';
import { createPricingService } from '../../src/pricing/create-pricing-service.js';
import { priceAlias } from '../../src/pricing/price-aliases.js';
import { loadConfig } from '../../src/config/load-config.js';
import { systemClock } from '../../src/lib/clock.js';
import pino from 'pino';

describe('prices of resold models', () => {
  it.each([
    ['vertex-ai', 'gemini-2.5-flash', { provider: 'google', model: 'gemini-2.5-flash' }],
    ['vertex-ai', 'publishers/google/models/gemini-2.5-pro', { provider: 'google', model: 'gemini-2.5-pro' }],
    [
      'bedrock',
      'anthropic.claude-opus-4-1-20250805-v1:0',
      { provider: 'anthropic', model: 'claude-opus-4-1-20250805' },
    ],
    ['bedrock', 'us.anthropic.claude-opus-4-5-v1:0', { provider: 'anthropic', model: 'claude-opus-4-5' }],
    [
      'bedrock',
      'arn:aws:bedrock:us-west-2::foundation-model/cohere.rerank-v3-5:0',
      { provider: 'cohere', model: 'rerank-v3-5:0' },
    ],
    ['bedrock', 'amazon.titan-embed-text-v2:0', null],
    ['openai', 'gpt-4o', null],
  ])('%s %s', (provider, model, expected) => {
    expect(priceAlias(provider, model)).toEqual(expected);
  });

  it('prices Bedrock Claude and Vertex Gemini at the vendors’ list prices', async () => {
    const config = loadConfig({ env: {} });
    const pricing = createPricingService({ config, clock: systemClock, logger: pino({ level: 'silent' }) });
    const usage = { promptTokens: 1_000_000, completionTokens: 0, cachedTokens: 0, totalTokens: 1_000_000 };
    expect(await pricing.costOf('bedrock', 'anthropic.claude-opus-4-1-20250805-v1:0', usage)).toBe(
      await pricing.costOf('anthropic', 'claude-opus-4-1', usage),
    );
    expect(await pricing.costOf('vertex-ai', 'gemini-2.5-flash', usage)).toBe(
      await pricing.costOf('google', 'gemini-2.5-flash', usage),
    );
    expect(await pricing.costOf('bedrock', 'amazon.titan-embed-text-v2:0', usage)).toBeNull();
  });
});
