import { z } from 'zod';

import type { ModelPrice } from './pricing-service.js';

/*
 * The two formats a pricing document (a local or log-store `<provider>.json`, or the proxy's
 * `/pricing/{provider}` answer) may take; docs/pricing.md describes both.
 *
 * - ours: `{ currency: 'USD', models: { <model>: { input, output, cached_input?, long_prompt? } } }`,
 *   USD per 1,000,000 tokens, as providers publish them;
 * - the reference gateway's: `{ <model>: { pricing_config: ModelPricingConfig } }`, where
 *   `pay_as_you_go.request_token.price` etc. are USD cents per token.
 */

const price = z.number().finite().min(0);

const longPrompt = z
  .object({
    threshold_tokens: z.number().int().positive(),
    input: price,
    output: price,
    cached_input: price.optional(),
  })
  .strict();

const simpleEntry = z
  .object({ input: price, output: price, cached_input: price.optional(), long_prompt: longPrompt.optional() })
  .strict();

const simpleDocument = z
  .object({ $comment: z.string().optional(), currency: z.literal('USD'), models: z.record(z.string(), z.unknown()) })
  .strict();

const tokenPrice = z.object({ price }).loose();

/** One model of the reference format; only what is priced per token is read, the rest is allowed. */
const referenceEntry = z
  .object({
    pricing_config: z
      .object({
        currency: z.literal('USD').optional(),
        pay_as_you_go: z
          .object({
            request_token: tokenPrice.optional(),
            response_token: tokenPrice.optional(),
            cache_read_input_token: tokenPrice.optional(),
            additional_units: z.record(z.string(), z.unknown()).optional(),
            image: z.record(z.string(), z.unknown()).optional(),
          })
          .loose(),
      })
      .loose(),
  })
  .loose();

/** Keys of a reference-format document that are not models. */
const REFERENCE_NON_MODELS = new Set(['default', '$comment', 'name', 'description']);

export interface ParsedPrices {
  prices: Map<string, ModelPrice>;
  /** `<model>: <reason>` for every entry that could not be read; the caller decides how loud to be. */
  invalid: string[];
}

/** Rounds away binary noise (0.000015 × 10,000 = 0.15000000000000002) without losing real digits. */
const tidy = (value: number) => Number(value.toPrecision(12));

/** USD cents per token → USD per 1,000,000 tokens: × 1,000,000 tokens ÷ 100 cents. */
export const centsPerTokenToUsdPerMillion = (cents: number) => tidy(cents * 10_000);

/** USD per 1,000,000 tokens → USD cents per token. */
export const usdPerMillionToCentsPerToken = (usd: number) => tidy(usd / 10_000);

const issues = (error: z.ZodError) =>
  error.issues.map((i) => `${i.path.join('.') || '(entry)'}: ${i.message}`).join('; ');

function parseSimple(doc: z.infer<typeof simpleDocument>): ParsedPrices {
  const prices = new Map<string, ModelPrice>();
  const invalid: string[] = [];
  for (const [model, raw] of Object.entries(doc.models)) {
    const entry = simpleEntry.safeParse(raw);
    if (entry.success) prices.set(model, entry.data);
    else invalid.push(`${model}: ${issues(entry.error)}`);
  }
  return { prices, invalid };
}

function parseReference(doc: Record<string, unknown>): ParsedPrices {
  const prices = new Map<string, ModelPrice>();
  const invalid: string[] = [];
  for (const [model, raw] of Object.entries(doc)) {
    // The reference's `default` entry carries zero prices; using it for unknown models would
    // record their cost as 0, so it is never a price.
    if (REFERENCE_NON_MODELS.has(model)) continue;
    const entry = referenceEntry.safeParse(raw);
    if (!entry.success) {
      invalid.push(`${model}: ${issues(entry.error)}`);
      continue;
    }
    const payg = entry.data.pricing_config.pay_as_you_go;
    const { request_token: request, response_token: response } = payg;
    const otherUnits = Object.keys(payg.additional_units ?? {}).length + Object.keys(payg.image ?? {}).length;
    // Priced by something other than tokens (images, audio hours, video seconds): not a token
    // price, and a token cost of 0 would be false.
    if (!request && !response && otherUnits > 0) continue;
    if (request && response && request.price + response.price === 0 && otherUnits > 0) continue;
    if (!request || !response) {
      invalid.push(`${model}: pay_as_you_go needs both request_token and response_token`);
      continue;
    }
    const cached = payg.cache_read_input_token?.price;
    prices.set(model, {
      input: centsPerTokenToUsdPerMillion(request.price),
      output: centsPerTokenToUsdPerMillion(response.price),
      ...(cached === undefined ? {} : { cached_input: centsPerTokenToUsdPerMillion(cached) }),
    });
  }
  return { prices, invalid };
}

/**
 * Reads a pricing document in either format. Entries that cannot be read are listed in
 * `invalid` rather than failing the whole document, so that one odd entry from a proxy does
 * not hide every other price; a document that is neither format throws.
 */
export function parsePricingDocument(json: unknown): ParsedPrices {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new Error('a pricing document must be a JSON object');
  const record = json as Record<string, unknown>;
  if ('currency' in record || ('models' in record && !isReferenceEntry(record.models))) {
    const simple = simpleDocument.safeParse(record);
    if (!simple.success) throw new Error(`not a pricing document: ${issues(simple.error)}`);
    return parseSimple(simple.data);
  }
  return parseReference(record);
}

function isReferenceEntry(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'pricing_config' in value;
}

/** The reference's ModelPricingConfig for a price of ours (the base tier when there is a long-prompt tier). */
export function toModelPricingConfig(price: ModelPrice) {
  return {
    pay_as_you_go: {
      request_token: { price: usdPerMillionToCentsPerToken(price.input) },
      response_token: { price: usdPerMillionToCentsPerToken(price.output) },
      ...(price.cached_input === undefined
        ? {}
        : { cache_read_input_token: { price: usdPerMillionToCentsPerToken(price.cached_input) } }),
    },
    currency: 'USD' as const,
  };
}
