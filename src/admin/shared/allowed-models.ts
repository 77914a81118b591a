import { z } from 'zod';

/**
 * `defaults.allowed_models` of API keys and workspaces: the models their gateway requests may
 * use (docs/models.md). Each entry is a name or a prefix ending in `*`: `gpt-4o-mini`, `gpt-4o*`,
 * `@openai-prod/gpt-4o`, `@openai-prod/*`, an alias name, or `*`. Null (or left out): any model.
 */
export const allowedModelsField = z
  .array(
    z
      .string()
      .min(1)
      .max(300)
      .regex(
        /^[^*\s\p{Cc}]*\*?$/u,
        'a model pattern is a name, or a prefix ending in * (no spaces, * only at the end)',
      ),
  )
  .max(200)
  .nullable()
  .describe(
    'Model patterns gateway requests may use: names or prefixes ending in * (gpt-4o*, @openai-prod/*, an alias name). Null: any model.',
  );
