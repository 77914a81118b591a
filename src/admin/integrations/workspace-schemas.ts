import { z } from 'zod';
import { credentialSlug } from '../credentials/schemas.js';
import { idOrSlug } from '../shared/pagination.js';

/**
 * Budgets and rate limits of an integration in one workspace: the reference has them, svcgw
 * does not (limits apply to keys, workspaces and policies). `null` and `[]` say "none" and are
 * taken; anything else is refused, saying what to use instead.
 */
const limitsRefused = (field: 'usage_limits' | 'rate_limits') =>
  z
    .array(z.unknown())
    .max(0, {
      message: `${field} of an integration in a workspace is not supported: svcgw has no ${field === 'usage_limits' ? 'budget' : 'rate limit'} on an integration; use a ${field === 'usage_limits' ? 'usage-limits' : 'rate-limits'} policy whose conditions name the workspace. Send null or leave it out.`,
    })
    .nullable()
    .optional();

const resetRefused = z
  .boolean()
  .refine((reset) => !reset, {
    message: 'reset_usage is not supported: an integration has no usage of its own in a workspace to reset.',
  })
  .optional();

const providerChoice = {
  create_default_provider: z
    .boolean()
    .optional()
    .describe('Make a provider from the integration in each workspace enabled here that has none (default true).'),
  default_provider_slug: credentialSlug.optional().describe("That provider's slug (default: the integration's)."),
};

export const workspaceAccessEntry = z
  .object({
    id: idOrSlug.describe('Workspace id or slug.'),
    enabled: z.boolean(),
    usage_limits: limitsRefused('usage_limits'),
    rate_limits: limitsRefused('rate_limits'),
    reset_usage: resetRefused,
    ...providerChoice,
  })
  .strict();

export const putWorkspaceAccessBody = z
  .object({
    workspaces: z.array(workspaceAccessEntry).max(1000).optional(),
    global_workspace_access: z
      .object({
        enabled: z.boolean().describe('Whether every workspace without a setting of its own may use the integration.'),
        usage_limits: limitsRefused('usage_limits'),
        rate_limits: limitsRefused('rate_limits'),
      })
      .strict()
      .optional(),
    override_existing_workspace_access: z
      .boolean()
      .default(false)
      .describe("Forget every workspace's own setting first, so that global_workspace_access applies to all of them."),
    ...providerChoice,
  })
  .strict()
  .refine((body) => body.workspaces !== undefined || body.global_workspace_access !== undefined, {
    message: 'send workspaces, global_workspace_access or both',
  });

export const workspaceAccessObject = z.object({
  total: z.number(),
  workspaces: z.array(
    z.object({
      id: z.string(),
      slug: z.string(),
      enabled: z.boolean(),
      usage_limits: z.null(),
      rate_limits: z.null(),
    }),
  ),
  global_workspace_access: z.object({ enabled: z.boolean() }),
});

export type PutWorkspaceAccessBody = z.infer<typeof putWorkspaceAccessBody>;
export type WorkspaceAccessObject = z.infer<typeof workspaceAccessObject>;
