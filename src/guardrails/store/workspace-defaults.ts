import { z } from 'zod';
import { guardrailFieldSchemas, guardrailUsesOf, type NodeGuardrails } from './config-entries.js';

/** A workspace's `defaults`: the guardrails every request of the workspace runs (JWT requests included). */
export const workspaceDefaultsInput = z
  .object({
    input_guardrails: guardrailFieldSchemas.input_guardrails,
    output_guardrails: guardrailFieldSchemas.output_guardrails,
  })
  .strict();

export type WorkspaceDefaults = z.infer<typeof workspaceDefaultsInput>;

/** The stored defaults (JSON text or null) as the guardrails they run. */
export function parseWorkspaceDefaults(stored: string | null): NodeGuardrails {
  if (stored === null) return { before: [], after: [] };
  // The stored JSON also holds the workspace's default metadata; only the guardrails are read here.
  const { input_guardrails, output_guardrails } = JSON.parse(stored) as Record<string, unknown>;
  const parsed = workspaceDefaultsInput.safeParse({ input_guardrails, output_guardrails });
  return parsed.success ? guardrailUsesOf(parsed.data) : { before: [], after: [] };
}
