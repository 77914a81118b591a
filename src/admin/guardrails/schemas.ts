import { z } from 'zod';
import { actionsInput, checkInput, checkProblem } from '../../guardrails/store/index.js';
import { idOrSlug } from '../shared/pagination.js';

export const guardrailStatus = z.enum(['active', 'archived']);

/** Lower-case letters, digits and dashes; never a UUID, so that `:guardrailId` can also take a slug. */
const guardrailSlug = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{0,62}$/,
    'slug is 1–63 lower-case letters, digits and dashes, starting with a letter or digit',
  )
  .refine(
    (slug) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(slug),
    'slug cannot look like an id',
  );

/** At least one check; each id must be built in and its parameters must suit it (param names the field). */
const checksField = z
  .array(checkInput)
  .min(1, 'a guardrail has at least one check')
  .max(50)
  .superRefine((checks, ctx) => {
    checks.forEach((check, i) => {
      const problem = checkProblem(check.id, check.parameters);
      if (problem) ctx.addIssue({ code: 'custom', path: [i, ...problem.path], message: problem.message });
    });
  });

export const createGuardrailBody = z
  .object({
    name: z.string().min(1).max(255),
    slug: guardrailSlug.optional(),
    checks: checksField,
    actions: actionsInput,
    workspace_id: idOrSlug
      .optional()
      .describe('Make it a workspace guardrail; without it an admin key makes an organisation guardrail.'),
    organisation_id: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe("Accepted for compatibility; must be the caller's organisation."),
  })
  .strict();

export const updateGuardrailBody = z
  .object({
    name: z.string().min(1).max(255).optional(),
    checks: checksField.optional(),
    actions: actionsInput.optional(),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one field to change' });

export const listGuardrailsQuery = z
  .object({
    workspace_id: idOrSlug.optional().describe("Guardrails usable in this workspace: its own and the organisation's."),
    organisation_id: z.string().min(1).max(255).optional(),
    status: guardrailStatus.default('active'),
    page_size: z.coerce.number().int().min(1).max(1000).default(100).describe('Items per page (1 to 1000).'),
    current_page: z.coerce.number().int().min(0).default(0).describe('0-based page number.'),
  })
  .strict();

export const guardrailParams = z.object({ guardrailId: z.string().min(1).max(255) });

const feedback = z.object({ value: z.number(), weight: z.number(), metadata: z.string() });
const actionsObject = z.object({
  deny: z.boolean(),
  async: z.boolean(),
  on_success: z.object({ feedback }),
  on_fail: z.object({ feedback }),
  message: z.string().optional(),
});
const checkObject = z.object({
  id: z.string(),
  parameters: z.record(z.string(), z.unknown()),
  name: z.string().optional(),
  is_enabled: z.boolean(),
});

export const guardrailSummary = z.object({
  id: z.uuid(),
  name: z.string(),
  slug: z.string(),
  organisation_id: z.uuid(),
  workspace_id: z.uuid().nullable(),
  status: guardrailStatus,
  version_id: z.uuid(),
  created_at: z.string(),
  last_updated_at: z.string(),
  owner_id: z.string(),
  updated_by: z.string().nullable(),
  object: z.literal('guardrail'),
});

export const guardrailObject = guardrailSummary.extend({
  version: z.number().int(),
  checks: z.array(checkObject),
  actions: actionsObject,
});

export const guardrailVersionObject = z.object({
  version_id: z.uuid(),
  version: z.number().int(),
  guardrail_id: z.uuid(),
  name: z.string(),
  checks: z.array(checkObject),
  actions: actionsObject,
  is_latest: z.boolean(),
  created_at: z.string(),
  created_by_key_id: z.string().nullable(),
  object: z.literal('guardrail_version'),
});

export type CreateGuardrailBody = z.infer<typeof createGuardrailBody>;
export type UpdateGuardrailBody = z.infer<typeof updateGuardrailBody>;
export type ListGuardrailsQuery = z.infer<typeof listGuardrailsQuery>;
export type GuardrailSummary = z.infer<typeof guardrailSummary>;
export type GuardrailObject = z.infer<typeof guardrailObject>;
export type GuardrailVersionObject = z.infer<typeof guardrailVersionObject>;
