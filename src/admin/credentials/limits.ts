import { z } from 'zod';
import { invalid } from '../../lib/errors.js';
import { updatedUsageLimits, usageLimitsField, withResetSchedule } from '../../limits/schemas.js';

/**
 * `usage_limits`, `rate_limits`, `expires_at` and `reset_usage` of providers and virtual keys,
 * enforced by the gateway on every request sent with the credential (docs/limits.md).
 */
const credentialRateLimit = z
  .object({
    type: z.enum(['requests', 'tokens']).default('requests'),
    unit: z.enum(['rps', 'rpm', 'rph', 'rpd', 'rpw']),
    value: z.number().int().min(0),
  })
  .strict();

/** The reference sends one object on create and update, and reads an array back: both are taken. */
export const credentialRateLimitsField = z
  .union([credentialRateLimit, z.array(credentialRateLimit).max(10)])
  .nullable()
  .describe(
    'One rate limit {type, unit, value} or an array of them; each counts the requests (or tokens) sent with this credential. null removes them.',
  );

const expiresAt = z.iso
  .datetime({ offset: true })
  .nullable()
  .describe('After it the gateway refuses requests sent with this credential (403 CREDENTIAL_EXPIRED); null: never.');

export const credentialLimitFields = {
  usage_limits: usageLimitsField
    .optional()
    .describe('A budget of the credential (cost in USD or tokens), counted whatever key uses it. null removes it.'),
  rate_limits: credentialRateLimitsField.optional(),
  expires_at: expiresAt.optional(),
};

export const credentialLimitUpdateFields = {
  ...credentialLimitFields,
  reset_usage: z
    .boolean()
    .optional()
    .describe('Starts a new usage period now (last_reset_at): the budget is whole again.'),
};

type LimitInput = {
  usage_limits?: z.infer<typeof usageLimitsField> | undefined;
  rate_limits?: z.infer<typeof credentialRateLimitsField> | undefined;
  expires_at?: string | null | undefined;
};

interface LimitColumns {
  usage_limits: string | null;
  rate_limits: string | null;
  expires_at: string | null;
  last_reset_at: string | null;
}

function rateColumn(input: z.infer<typeof credentialRateLimitsField>): string | null {
  if (input === null) return null;
  const list = Array.isArray(input) ? input : [input];
  return list.length === 0 ? null : JSON.stringify(list);
}

function expiryColumn(input: string | null, now: number): string | null {
  if (input === null) return null;
  const at = Date.parse(input);
  if (at <= now) throw invalid('expires_at', 'expires_at must be in the future.');
  return new Date(at).toISOString();
}

/** The limit columns of a new credential. */
export function newLimitColumns(body: LimitInput, now: number): Omit<LimitColumns, 'last_reset_at'> {
  const usage = body.usage_limits ? withResetSchedule(body.usage_limits, now) : null;
  return {
    usage_limits: usage ? JSON.stringify({ ...usage, last_reset_at: null }) : null,
    rate_limits: body.rate_limits === undefined ? null : rateColumn(body.rate_limits),
    expires_at: body.expires_at === undefined ? null : expiryColumn(body.expires_at, now),
  };
}

/** The limit columns an update changes; `reset_usage` starts a new period now (and sets last_reset_at). */
export function limitPatch(
  stored: Pick<LimitColumns, 'usage_limits'>,
  body: LimitInput & { reset_usage?: boolean | undefined },
  now: number,
): Partial<LimitColumns> {
  const patch: Partial<LimitColumns> = {};
  const usage = updatedUsageLimits(stored.usage_limits, body, now);
  if (usage !== undefined) patch.usage_limits = usage;
  if (body.reset_usage) patch.last_reset_at = new Date(now).toISOString();
  if (body.rate_limits !== undefined) patch.rate_limits = rateColumn(body.rate_limits);
  if (body.expires_at !== undefined) patch.expires_at = expiryColumn(body.expires_at, now);
  return patch;
}

/** The limit fields of a credential object, as the reference reads them (each present, null when unset). */
export function limitFieldsOf(row: Omit<LimitColumns, 'last_reset_at'>) {
  return {
    usage_limits: row.usage_limits === null ? null : (JSON.parse(row.usage_limits) as Record<string, unknown>),
    rate_limits:
      row.rate_limits === null
        ? null
        : (JSON.parse(row.rate_limits) as Array<{ type: string; unit: string; value: number }>),
    expires_at: row.expires_at,
    // The reference has a number here and does not say what it counts; svcgw resets with the boolean on PUT.
    reset_usage: null,
  };
}

/** `expired` once expires_at has passed, as the reference shows it; the stored status otherwise. */
export function shownStatus<S extends string>(status: S, expiresAt: string | null, now: number): S | 'expired' {
  return status === 'active' && expiresAt !== null && Date.parse(expiresAt) <= now ? 'expired' : status;
}

export const limitObjectFields = {
  usage_limits: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe('The budget (with last_reset_at and next_usage_reset_at), or null.'),
  rate_limits: z
    .array(z.object({ type: z.string(), unit: z.string(), value: z.number() }))
    .nullable()
    .describe('Always an array (null when none), whichever shape was sent.'),
  expires_at: z.string().nullable(),
  reset_usage: z.null().describe('Always null: send reset_usage: true on update to start a new usage period.'),
};
