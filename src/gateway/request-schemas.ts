import { z } from 'zod';
import { compileQuickCheck, type QuickCheck } from './quick-body-check.js';

/**
 * Bounds from the spec's completion, embeddings and Limits tables, checked before any upstream
 * call. Objects are loose: fields we do not know are forwarded untouched, because providers add
 * parameters faster than we can. Nested content (messages, tools) is the provider's to judge.
 */
const penalty = z.number().min(-2).max(2).nullish();
const temperature = z.number().min(0).max(2).nullish();
const topP = z.number().min(0).max(1).nullish();
const nonNegativeInt = z.number().int().min(0).nullish();
const stop = z.union([z.string(), z.array(z.string()).max(4, 'stop takes up to 4 sequences')]).nullish();
const logitBias = z.record(z.string(), z.number().min(-100).max(100)).nullish();
const seed = z.number().int().min(-9223372036854776000).max(9223372036854776000).nullish();
const streamOptions = z.looseObject({ include_usage: z.boolean().optional() }).nullish();

type JoinedFields = {
  stream?: boolean | null | undefined;
  stream_options?: unknown;
  best_of?: number | null | undefined;
  n?: number | null | undefined;
};

/**
 * Rules that join two fields: `stream_options` needs `stream: true`; `best_of` is at least `n`
 * (OpenAI's rule; `best_of: 1, n: 1` are its defaults sent explicitly), and only `best_of: 1`
 * (one candidate, nothing to choose) can be streamed.
 */
function crossFieldIssues(body: JoinedFields): Array<{ path: string; message: string }> {
  const issues: Array<{ path: string; message: string }> = [];
  if (body.stream_options !== undefined && body.stream_options !== null && body.stream !== true)
    issues.push({ path: 'stream_options', message: 'stream_options is only allowed with stream: true' });
  if (body.best_of !== undefined && body.best_of !== null) {
    if (body.stream === true && body.best_of > 1)
      issues.push({ path: 'best_of', message: 'best_of greater than 1 cannot be used with stream' });
    if (body.n !== undefined && body.n !== null && body.best_of < body.n)
      issues.push({ path: 'best_of', message: `best_of must be at least n (${body.n})` });
  }
  return issues;
}

function crossFieldRules(body: JoinedFields, ctx: z.RefinementCtx) {
  for (const { path, message } of crossFieldIssues(body)) ctx.addIssue({ code: 'custom', path: [path], message });
}

/** The quick check's side of the same rules: they hold when they raise nothing. */
const crossFieldsHold = (body: JoinedFields) => crossFieldIssues(body).length === 0;

const sampling = {
  model: z.string().min(1).optional(),
  n: z.number().int().min(1).max(128).nullish(),
  stop,
  frequency_penalty: penalty,
  presence_penalty: penalty,
  logit_bias: logitBias,
  temperature,
  top_p: topP,
  max_tokens: nonNegativeInt,
  seed,
  stream: z.boolean().nullish(),
  stream_options: streamOptions,
  user: z.string().nullish(),
};

const chatCompletionFields = z.looseObject({
  ...sampling,
  messages: z.array(z.unknown()).min(1),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
  max_completion_tokens: nonNegativeInt,
});
export const chatCompletionBody = chatCompletionFields.superRefine(crossFieldRules);

const completionFields = z.looseObject({
  ...sampling,
  prompt: z
    .union([z.string(), z.array(z.string()), z.array(z.number().int()), z.array(z.array(z.number().int()))])
    .nullish(),
  best_of: z.number().int().min(0).max(20).nullish(),
  echo: z.boolean().nullish(),
  logprobs: z.number().int().min(0).max(5).nullish(),
  suffix: z.string().nullish(),
});
export const completionBody = completionFields.superRefine(crossFieldRules);

const MAX_INPUTS = 2048;
export const embeddingsBody = z.looseObject({
  model: z.string().min(1).optional(),
  input: z.union([
    z.string().min(1, 'input must not be an empty string'),
    z
      .array(z.string().min(1, 'input must not contain empty strings'))
      .min(1)
      .max(MAX_INPUTS, `input arrays hold ${MAX_INPUTS} entries or fewer`),
    z.array(z.number().int()).min(1).max(MAX_INPUTS, `input arrays hold ${MAX_INPUTS} entries or fewer`),
    z
      .array(z.array(z.number().int()).min(1))
      .min(1)
      .max(MAX_INPUTS, `input arrays hold ${MAX_INPUTS} entries or fewer`),
  ]),
  dimensions: z.number().int().min(1).nullish(),
  encoding_format: z.enum(['float', 'base64']).nullish(),
  user: z.string().nullish(),
});

export const rerankBody = z.looseObject({
  model: z.string().min(1).optional(),
  query: z.string(),
  documents: z.array(z.unknown()).min(1),
  top_n: z.number().int().min(1).nullish(),
  return_documents: z.boolean().nullish(),
  max_chunks_per_doc: z.number().int().min(1).nullish(),
});

export const imageGenerationBody = z.looseObject({
  prompt: z.string().min(1),
  model: z.string().min(1).optional(),
  n: z.number().int().min(1).max(10).nullish(),
});

export const speechBody = z.looseObject({
  model: z.string().min(1),
  input: z.string().min(1),
  voice: z.unknown(),
});

export const moderationBody = z.looseObject({
  input: z.unknown().refine((v) => v !== undefined, 'input is required'),
  model: z.string().optional(),
});

export const responsesBody = z.looseObject({ model: z.string().min(1).optional(), stream: z.boolean().nullish() });

/**
 * The bodies checked cheaply before zod (quick-body-check.ts): a body the quick check passes is
 * valid as sent; any other goes through zod, whose error is the one answered. Refined schemas
 * are compiled from their fields, with their rules as a predicate. Moderation (a refinement on
 * a field) is left to zod.
 */
export const quickBodyChecks: ReadonlyMap<z.ZodType, QuickCheck> = new Map(
  (
    [
      [chatCompletionBody, compileQuickCheck(chatCompletionFields, crossFieldsHold)],
      [completionBody, compileQuickCheck(completionFields, crossFieldsHold)],
      [embeddingsBody, compileQuickCheck(embeddingsBody)],
      [rerankBody, compileQuickCheck(rerankBody)],
      [imageGenerationBody, compileQuickCheck(imageGenerationBody)],
      [speechBody, compileQuickCheck(speechBody)],
      [responsesBody, compileQuickCheck(responsesBody)],
    ] as Array<[z.ZodType, QuickCheck | null]>
  ).filter((entry): entry is [z.ZodType, QuickCheck] => entry[1] !== null),
);
