import { z } from 'zod';
import { AppError } from '../../lib/errors.js';
import type { ModelConfigService } from '../../pricing/create-pricing-service.js';
import { MAX_MODEL_ID_LENGTH } from '../../pricing/layered-lookup.js';
import { PROVIDER_ID } from '../../pricing/model-config-sources.js';
import { toModelPricingConfig } from '../../pricing/price-formats.js';
import type { ZodApp } from '../../http/zod-app.js';

const params = z
  .object({
    provider: z
      .string()
      .regex(PROVIDER_ID, 'must be a provider id such as openai or mistral-ai')
      .describe('Provider id, as in x-service-provider (openai, anthropic, google, mistral-ai, …).'),
    model: z
      .string()
      .min(1)
      .max(MAX_MODEL_ID_LENGTH)
      .describe('Model id; a model id with a slash is sent URL-encoded (meta-llama%2Fllama-4-scout).'),
  })
  .strict();

const centsPerToken = z.object({ price: z.number().describe('USD cents per token.') });
const perMillion = z.number().describe('USD per 1,000,000 tokens.');

const modelPricing = z.object({
  provider: z.string(),
  model: z.string(),
  priced_as: z
    .string()
    .describe('The entry that priced the model: the model itself, or its undated id for a dated model.'),
  source: z
    .enum(['proxy', 'log_store', 'local'])
    .describe('The source that answered (a cached answer names the source it came from).'),
  pay_as_you_go: z.object({
    request_token: centsPerToken,
    response_token: centsPerToken,
    cache_read_input_token: centsPerToken.optional(),
  }),
  currency: z.literal('USD'),
  per_million_tokens: z.object({
    input: perMillion,
    output: perMillion,
    cached_input: perMillion.nullable(),
    long_prompt: z
      .object({
        threshold_tokens: z.number(),
        input: perMillion,
        output: perMillion,
        cached_input: perMillion.nullable(),
      })
      .nullable()
      .describe(
        'Rates for every token of a request whose prompt is longer than threshold_tokens; null when the price has one tier.',
      ),
  }),
  object: z.literal('model-pricing'),
});

/**
 * `GET /v1/model-configs/pricing/:provider/:model`: the price the gateway applies to a model,
 * in the reference gateway's ModelPricingConfig shape (USD cents per token) plus the per-1M
 * figures and the source. Public, as in the reference (`security: []`): prices are not secret.
 */
export function registerModelPricingRoutes(app: ZodApp, pricing: ModelConfigService): void {
  app.get(
    '/v1/model-configs/pricing/:provider/:model',
    {
      schema: {
        tags: ['Model pricing'],
        summary: 'The price that applies to a model, and the source it came from (no authentication)',
        security: [],
        params,
        response: { 200: modelPricing },
      },
      config: { auth: { public: true } },
    },
    async (request) => {
      const { provider, model } = request.params;
      const found = await pricing.lookupPrice(provider, model);
      if (!found)
        throw new AppError(
          'NOT_FOUND',
          `No price is known for model ${model} of provider ${provider}; its requests are logged with an unknown cost.`,
          { param: 'model' },
        );
      const { price } = found;
      return {
        provider,
        model,
        priced_as: found.entry,
        source: found.source,
        ...toModelPricingConfig(price),
        per_million_tokens: {
          input: price.input,
          output: price.output,
          cached_input: price.cached_input ?? null,
          long_prompt: price.long_prompt
            ? {
                threshold_tokens: price.long_prompt.threshold_tokens,
                input: price.long_prompt.input,
                output: price.long_prompt.output,
                cached_input: price.long_prompt.cached_input ?? null,
              }
            : null,
        },
        object: 'model-pricing' as const,
      };
    },
  );
}
