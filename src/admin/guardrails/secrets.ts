import { redactCheckParameters } from '../../guardrails/registry.js';
import type { GuardrailCheck } from '../../guardrails/store/index.js';
import { REDACTED, redactSecrets } from '../../lib/redact.js';

/**
 * Check parameters may hold secrets (a webhook's `Authorization` header). They are write-only:
 * answers show them as `[REDACTED]`, and a `[REDACTED]` sent back in an update keeps the stored
 * value, so that reading a guardrail, editing it and sending it back loses nothing.
 */
export const maskChecks = (checks: GuardrailCheck[]): GuardrailCheck[] =>
  checks.map((check) => ({
    ...check,
    // The check's own secret fields (every webhook header, a detector's apiKey), then any secret-looking name.
    parameters: redactSecrets(redactCheckParameters(check.id, check.parameters)) as Record<string, unknown>,
  }));

/** `next` with every `[REDACTED]` replaced by the value at the same place in the same check of `previous`. */
export function keepRedacted(next: GuardrailCheck[], previous: GuardrailCheck[]): GuardrailCheck[] {
  return next.map((check, i) => {
    const before = previous[i];
    if (!before || before.id !== check.id) return check;
    return { ...check, parameters: restore(check.parameters, before.parameters) as Record<string, unknown> };
  });
}

function restore(value: unknown, stored: unknown): unknown {
  if (value === REDACTED) return stored === undefined ? value : stored;
  if (Array.isArray(value)) return value.map((item, i) => restore(item, Array.isArray(stored) ? stored[i] : undefined));
  if (typeof value !== 'object' || value === null) return value;
  const from = typeof stored === 'object' && stored !== null ? (stored as Record<string, unknown>) : {};
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, restore(inner, from[key])]));
}
