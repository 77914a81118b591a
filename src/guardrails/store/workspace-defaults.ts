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
  const parsed = workspaceDefaultsInput.safeParse(JSON.parse(stored));
  return parsed.success ? guardrailUsesOf(parsed.data) : { before: [], after: [] };
}
