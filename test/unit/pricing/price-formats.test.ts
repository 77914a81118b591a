import { describe, expect, it } from 'vitest';
import { parseCapabilitiesDocument } from '../../../src/pricing/capability-formats.js';
import {
  centsPerTokenToUsdPerMillion,
  parsePricingDocument,
  toModelPricingConfig,
  usdPerMillionToCentsPerToken,
} from '../../../src/pricing/price-formats.js';
import { costFromPrice } from '../../../src/pricing/pricing-service.js';

const reference = (request: number, response: number, extra: Record<string, unknown> = {}) => ({
  pricing_config: {
    pay_as_you_go: { request_token: { price: request }, response_token: { price: response }, ...extra },
  },
});

describe('cents per token ↔ USD per 1M tokens', () => {
  it('converts the reference figures exactly (× 10,000), without binary noise', () => {
    expect(centsPerTokenToUsdPerMillion(0.00025)).toBe(2.5); // $2.50 / 1M
    expect(centsPerTokenToUsdPerMillion(0.001)).toBe(10);
    expect(centsPerTokenToUsdPerMillion(0.000015)).toBe(0.15); // 0.000015 × 10000 is 0.15000000000000002 in floating point
    expect(centsPerTokenToUsdPerMillion(0.0000075)).toBe(0.075);
    expect(usdPerMillionToCentsPerToken(2.5)).toBe(0.00025);
    expect(usdPerMillionToCentsPerToken(0.075)).toBe(0.0000075);
    for (const usd of [0.02, 0.1, 0.15, 0.4, 1.1, 2.5, 3, 15, 75])
      expect(centsPerTokenToUsdPerMillion(usdPerMillionToCentsPerToken(usd))).toBe(usd);
  });

  it('shows a price of ours as the reference ModelPricingConfig', () => {
    expect(toModelPricingConfig({ input: 2.5, output: 10, cached_input: 1.25 })).toEqual({
      pay_as_you_go: {
        request_token: { price: 0.00025 },
        response_token: { price: 0.001 },
        cache_read_input_token: { price: 0.000125 },
      },
      currency: 'USD',
    });
    expect(toModelPricingConfig({ input: 0.5, output: 1.5 }).pay_as_you_go).not.toHaveProperty(
      'cache_read_input_token',
    );
  });
});

describe('parsePricingDocument', () => {
  it('reads our per-1M format', () => {
    const { prices, invalid } = parsePricingDocument({
      $comment: 'x',
      currency: 'USD',
      models: { 'gpt-4o': { input: 2.5, output: 10, cached_input: 1.25 } },
    });
    expect(invalid).toEqual([]);
    expect(prices.get('gpt-4o')).toEqual({ input: 2.5, output: 10, cached_input: 1.25 });
  });

  it('reads the reference format, converting cents per token to USD per 1M tokens', () => {
    const { prices, invalid } = parsePricingDocument({
      default: reference(0, 0, {}),
      'gpt-4o': reference(0.00025, 0.001, {
        cache_read_input_token: { price: 0.000125 },
        additional_units: { web_search: { price: 100 } },
      }),
      'llama-3.1-8b-instant': {
        pricing_config: {
          pay_as_you_go: { request_token: { price: 0.000005 }, response_token: { price: 0.000008 } },
          currency: 'USD',
          calculate: { request: { operation: 'multiply', operands: [] } },
        },
      },
    });
    expect(invalid).toEqual([]);
    expect(prices.get('gpt-4o')).toEqual({ input: 2.5, output: 10, cached_input: 1.25 });
    expect(prices.get('llama-3.1-8b-instant')).toEqual({ input: 0.05, output: 0.08 });
  });

  it('never takes the reference `default` (zero) entry, nor zero token prices of models billed in other units, as a price', () => {
    const { prices } = parsePricingDocument({
      default: reference(0, 0),
      'whisper-large-v3': reference(0, 0, { additional_units: { audio_hour: { price: 11.1 } } }),
      'free-model': reference(0, 0),
      'flux-pro': { pricing_config: { pay_as_you_go: { additional_units: { megapixels: { price: 0.05 } } } } },
      'imagen-4': { pricing_config: { pay_as_you_go: { image: { default: { default: { price: 0.04 } } } } } },
    });
    // Image and video models of the reference files have no token price at all: skipped, not errors.
    expect(
      parsePricingDocument({
        'flux-pro': { pricing_config: { pay_as_you_go: { additional_units: { megapixels: { price: 0.05 } } } } },
      }).invalid,
    ).toEqual([]);
    expect(prices.has('flux-pro') || prices.has('imagen-4')).toBe(false);
    expect(prices.has('default')).toBe(false);
    expect(prices.has('whisper-large-v3')).toBe(false); // unknown, not 0
    expect(prices.get('free-model')).toEqual({ input: 0, output: 0 }); // a model that is really free
  });

  it('lists entries it cannot read instead of failing the whole document', () => {
    const ours = parsePricingDocument({
      currency: 'USD',
      models: { good: { input: 1, output: 2 }, bad: { input: -1, output: 2 }, typo: { inptu: 1, output: 2 } },
    });
    expect([...ours.prices.keys()]).toEqual(['good']);
    expect(ours.invalid).toHaveLength(2);
    const theirs = parsePricingDocument({
      good: reference(0.0001, 0.0002),
      'no-response-price': { pricing_config: { pay_as_you_go: { request_token: { price: 0.0001 } } } },
    });
    expect([...theirs.prices.keys()]).toEqual(['good']);
    expect(theirs.invalid[0]).toMatch(/^no-response-price: /);
  });

  it('refuses what is neither format', () => {
    expect(() => parsePricingDocument([])).toThrow(/JSON object/);
    expect(() => parsePricingDocument({ currency: 'EUR', models: {} })).toThrow(/not a pricing document/);
  });
});

describe('costFromPrice', () => {
  const usage = (promptTokens: number | null, completionTokens: number | null, cachedTokens: number | null = null) => ({
    promptTokens,
    completionTokens,
    cachedTokens,
  });

  it('bills cached prompt tokens at the cached price, and the rest at the input price', () => {
    // 1000 prompt tokens of which 400 cached, 200 completion tokens at $2.50 / $1.25 / $10 per 1M.
    expect(costFromPrice({ input: 2.5, output: 10, cached_input: 1.25 }, usage(1000, 200, 400))).toBeCloseTo(
      (600 * 2.5 + 400 * 1.25 + 200 * 10) / 1e6,
      15,
    );
    expect(costFromPrice({ input: 2.5, output: 10 }, usage(1000, 200, 400))).toBeCloseTo(
      (1000 * 2.5 + 200 * 10) / 1e6,
      15,
    );
  });

  it('applies long-prompt rates to the whole request past the threshold', () => {
    const price = {
      input: 1.25,
      output: 10,
      cached_input: 0.125,
      long_prompt: { threshold_tokens: 200_000, input: 2.5, output: 15, cached_input: 0.25 },
    };
    expect(costFromPrice(price, usage(200_000, 1000))).toBeCloseTo((200_000 * 1.25 + 1000 * 10) / 1e6, 12);
    expect(costFromPrice(price, usage(200_001, 1000, 1))).toBeCloseTo((200_000 * 2.5 + 1 * 0.25 + 1000 * 15) / 1e6, 12);
  });

  it('is unknown without a prompt token count', () => {
    expect(costFromPrice({ input: 1, output: 1 }, usage(null, 10))).toBeNull();
  });
});

describe('parseCapabilitiesDocument', () => {
  it('reads our format', () => {
    const { capabilities, invalid } = parseCapabilitiesDocument({
      models: {
        'gpt-4.1': {
          type: 'chat',
          context_window: 1_047_576,
          max_output_tokens: 32_768,
          input_modalities: ['text', 'image'],
          output_modalities: ['text'],
          supports: ['tools'],
        },
      },
    });
    expect(invalid).toEqual([]);
    expect(capabilities.get('gpt-4.1')).toEqual({
      type: 'chat',
      context_window: 1_047_576,
      max_output_tokens: 32_768,
      input_modalities: ['text', 'image'],
      output_modalities: ['text'],
      supports: ['tools'],
    });
  });

  it("reads the reference's general format, the default entry filling what a model leaves out", () => {
    const { capabilities } = parseCapabilitiesDocument({
      name: 'groq',
      description: '',
      default: {
        params: [{ key: 'max_tokens', defaultValue: 256, maxValue: 4096 }],
        type: { primary: 'chat', supported: [] },
      },
      'llama-3.1-8b-instant': {
        params: [{ key: 'max_tokens', maxValue: 131072 }],
        type: { primary: 'chat', supported: ['tools'] },
      },
      'whisper-large-v3': { params: [], type: { primary: 'audio' } },
    });
    expect(capabilities.has('default')).toBe(false);
    expect(capabilities.get('llama-3.1-8b-instant')).toMatchObject({
      type: 'chat',
      max_output_tokens: 131072,
      supports: ['tools'],
      context_window: null,
    });
    expect(capabilities.get('whisper-large-v3')).toMatchObject({
      type: 'audio',
      max_output_tokens: 4096,
      supports: [],
    });
  });
});
