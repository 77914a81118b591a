import { z } from 'zod';
import { hasSchedule, nextResetAfter } from './periods.js';

/** A rate limit carried by an API key or a workspace (the reference's `rate_limits[]` entry). */
export const rateLimitEntry = z
  .object({
    type: z.enum(['requests', 'tokens']),
    unit: z.enum(['rps', 'rpm', 'rph', 'rpd', 'rpw']),
    value: z.number().int().min(0),
  })
  .strict();
export const rateLimitsField = z.array(rateLimitEntry).max(10).nullable();
export type RateLimitEntry = z.infer<typeof rateLimitEntry>;

/**
 * A budget carried by an API key or a workspace (`usage_limits`). `periodic_reset` and
 * `periodic_reset_days` are mutually exclusive; without either the limit is cumulative.
 */
export const usageLimitsField = z
  .object({
    credit_limit: z.number().positive(),
    type: z.enum(['cost', 'tokens']).default('cost'),
    alert_threshold: z.number().positive().nullable().optional(),
    periodic_reset: z.enum(['weekly', 'monthly']).nullable().optional(),
    periodic_reset_days: z.number().int().min(1).max(365).nullable().optional(),
    next_usage_reset_at: z.iso.datetime({ offset: true }).nullable().optional(),
  })
  .strict()
  .superRefine((limits, ctx) => {
    if (limits.periodic_reset && limits.periodic_reset_days) {
      ctx.addIssue({
        code: 'custom',
        path: ['periodic_reset_days'],
        message: 'periodic_reset and periodic_reset_days are mutually exclusive',
      });
    }
    if (
      limits.alert_threshold !== null &&
      limits.alert_threshold !== undefined &&
      limits.alert_threshold >= limits.credit_limit
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['alert_threshold'],
        message: 'alert_threshold must be less than credit_limit',
      });
    }
  })
  .nullable();
export type UsageLimits = NonNullable<z.infer<typeof usageLimitsField>>;

/** Fills in `next_usage_reset_at` from the schedule when a budget is set without one. */
export function withResetSchedule(limits: UsageLimits, now: number): UsageLimits {
  if (limits.next_usage_reset_at || !hasSchedule(limits)) return limits;
  const next = nextResetAfter(now, limits);
  return { ...limits, next_usage_reset_at: next === null ? null : new Date(next).toISOString() };
}

/**
 * The stored `usage_limits` JSON after an update of a key or a workspace: new limits keep the
 * current period (`last_reset_at`), `null` removes them, and `reset_usage` starts a new period
 * now. Undefined when the update touches neither.
 */
export function updatedUsageLimits(
  stored: string | null,
  update: { usage_limits?: UsageLimits | null | undefined; reset_usage?: boolean | undefined },
  now: number,
): string | null | undefined {
  if (update.usage_limits === undefined && !update.reset_usage) return undefined;
  const current = stored === null ? null : (JSON.parse(stored) as UsageLimits & { last_reset_at?: string | null });
  let usage =
    update.usage_limits === undefined
      ? current
      : update.usage_limits === null
        ? null
        : { ...withResetSchedule(update.usage_limits, now), last_reset_at: current?.last_reset_at ?? null };
  if (update.reset_usage && usage) usage = { ...usage, last_reset_at: new Date(now).toISOString() };
  return usage === null ? null : JSON.stringify(usage);
}
