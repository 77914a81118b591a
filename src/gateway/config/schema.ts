import { z } from 'zod';
import { guardrailFieldSchemas } from '../../guardrails/store/index.js';

/** Strategy modes: how a node of the config tree picks among its targets. */
export const STRATEGY_MODES = ['single', 'fallback', 'loadbalance', 'conditional'] as const;
export const CACHE_MODES = ['simple', 'semantic'] as const;
/** How deep `targets` may nest: the root's targets are level 1. */
export const MAX_TARGET_DEPTH = 5;
export const MAX_RETRY_ATTEMPTS = 10;

const statusCodes = z.array(z.number().int().min(100).max(599)).max(100);
const targetName = z.string().min(1).max(128);

/**
 * A condition's query: an operator tree over `metadata.<field>` and `params.<field>`. Field
 * entries hold either a bare value (equality) or an object of comparison operators; `$and` and
 * `$or` combine sub-queries.
 */
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export const FIELD_OPERATORS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$regex'] as const;
const comparison = z
  .object({
    $eq: scalar.optional(),
    $ne: scalar.optional(),
    $gt: z.union([z.number(), z.string()]).optional(),
    $gte: z.union([z.number(), z.string()]).optional(),
    $lt: z.union([z.number(), z.string()]).optional(),
    $lte: z.union([z.number(), z.string()]).optional(),
    $in: z.array(scalar).optional(),
    $nin: z.array(scalar).optional(),
    $regex: z
      .string()
      .max(1024)
      .refine((pattern) => {
        try {
          new RegExp(pattern);
          return true;
        } catch {
          return false;
        }
      }, 'not a valid regular expression')
      .optional(),
  })
  .strict()
  .refine((ops) => Object.keys(ops).length > 0, 'give at least one operator');

export type ConditionQuery = { $and?: ConditionQuery[]; $or?: ConditionQuery[] } & { [field: string]: unknown };

const FIELD = /^(metadata|params)\.[A-Za-z0-9_.-]{1,128}$/;

export const conditionQuery: z.ZodType<ConditionQuery> = z.lazy(() =>
  z
    .record(z.string(), z.unknown())
    .superRefine((query, ctx) => {
      if (Object.keys(query).length === 0) ctx.addIssue({ code: 'custom', message: 'a query needs at least one field or $and/$or' });
      for (const [key, value] of Object.entries(query)) {
        if (key === '$and' || key === '$or') {
          const parsed = z.array(conditionQuery).min(1).safeParse(value);
          if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, path: [key, ...issue.path] });
        } else if (FIELD.test(key)) {
          const isOperators = typeof value === 'object' && value !== null && !Array.isArray(value);
          const parsed = (isOperators ? comparison : scalar).safeParse(value);
          if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, path: [key, ...issue.path] });
        } else {
          ctx.addIssue({ code: 'custom', path: [key], message: 'a query key is $and, $or, metadata.<field> or params.<field>' });
        }
      }
    }),
);

export const strategySchema = z
  .object({
    mode: z.enum(STRATEGY_MODES),
    on_status_codes: statusCodes.optional(),
    conditions: z.array(z.object({ query: conditionQuery, then: targetName }).strict()).max(100).optional(),
    default: targetName.optional(),
  })
  .strict();

export const retrySchema = z
  .object({
    attempts: z.number().int().min(0).max(MAX_RETRY_ATTEMPTS),
    on_status_codes: statusCodes.optional(),
    use_retry_after_header: z.boolean().optional(),
  })
  .strict();

export const cacheSchema = z
  .object({
    mode: z.enum(CACHE_MODES),
    max_age: z.number().int().min(1).optional(),
  })
  .strict();

/**
 * The fields of one node of the config tree, the root included. `targets` is checked node by
 * node in validate.ts so that nesting depth and the credential rules can name exact paths.
 */
export const nodeSchema = z
  .object({
    name: targetName.optional(),
    strategy: strategySchema.optional(),
    targets: z.array(z.unknown()).max(100).optional(),
    weight: z.number().finite().min(0).optional(),
    provider: z.string().min(1).max(255).optional(),
    virtual_key: z.string().min(1).max(255).optional(),
    api_key: z.string().min(1).max(4096).optional(),
    custom_host: z
      .string()
      .max(2048)
      .refine((value) => {
        try {
          const url = new URL(value);
          return url.protocol === 'http:' || url.protocol === 'https:';
        } catch {
          return false;
        }
      }, 'custom_host must be an http(s) URL')
      // Credentials in the URL would be stored and shown with the config: keys belong in a provider.
      .refine((value) => !/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(value), 'custom_host must not carry credentials (user:password@); store the key in a provider')
      .optional(),
    override_params: z.record(z.string(), z.unknown()).optional(),
    retry: retrySchema.optional(),
    request_timeout: z.number().int().min(1).optional(),
    cache: cacheSchema.optional(),
    azure_entra_scope: z.string().min(1).max(1024).optional(),
    anthropic_beta: z.string().min(1).max(1024).optional(),
    // Guardrails on any node, so that a fallback target can carry its own (docs/configs.md).
    ...guardrailFieldSchemas,
  })
  .strict();

type NodeFields = Omit<z.infer<typeof nodeSchema>, 'targets'>;

/** One node of a validated config: a provider leaf or a strategy over nested targets. */
export interface ConfigTarget extends NodeFields {
  targets?: ConfigTarget[];
}

/** A validated gateway config (the root node of the tree). */
export type GatewayConfig = ConfigTarget;
