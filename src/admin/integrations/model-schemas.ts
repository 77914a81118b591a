import { z } from 'zod';

/** A model name as providers spell them: `gpt-4o-mini`, `accounts/x/models/y`, `anthropic.claude-v2:1`. */
export const modelSlug = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$/, 'a model slug takes letters, digits and . _ : / @ + -');

const price = z.object({ price: z.number().min(0).finite() }).strict();

/** Stored with the model and shown back; cost is still computed from the price table (docs/models.md). */
export const pricingConfig = z
  .object({
    type: z.literal('static'),
    pay_as_you_go: z.object({ request_token: price.optional(), response_token: price.optional() }).strict().optional(),
  })
  .strict();

const modelInput = z
  .object({
    slug: modelSlug,
    enabled: z.boolean(),
    name: z.string().min(1).max(255).optional(),
    is_custom: z.boolean().optional().describe('A model the price table does not know (your own deployment).'),
    is_finetune: z.boolean().optional(),
    base_model_slug: modelSlug.nullable().optional().describe('The model a fine-tune was made from.'),
    pricing_config: pricingConfig.nullable().optional(),
  })
  .strict();

export const putModelsBody = z
  .object({
    models: z.array(modelInput).max(1000).default([]),
    allow_all_models: z
      .boolean()
      .optional()
      .describe('true: every model not disabled here is allowed; false: only the models enabled here.'),
  })
  .strict()
  .refine((body) => body.models.length > 0 || body.allow_all_models !== undefined, {
    message: 'send models, allow_all_models or both',
  });

export const deleteModelsQuery = z
  .object({
    slugs: z
      .string()
      .min(1)
      .max(65_536)
      .describe('Comma-separated model slugs to remove from the list (they fall back to allow_all_models).'),
  })
  .strict();

export const integrationModel = z.object({
  slug: z.string(),
  name: z.string().nullable(),
  enabled: z.boolean(),
  is_custom: z.boolean(),
  is_finetune: z.boolean(),
  base_model_slug: z.string().nullable(),
  pricing_config: z.record(z.string(), z.unknown()).nullable(),
  created_at: z.string(),
  last_updated_at: z.string(),
  object: z.literal('model'),
});

export const integrationModelsObject = z.object({
  total: z.number(),
  allow_all_models: z.boolean(),
  models: z.array(integrationModel),
});

export type PutModelsBody = z.infer<typeof putModelsBody>;
export type IntegrationModelObject = z.infer<typeof integrationModel>;
