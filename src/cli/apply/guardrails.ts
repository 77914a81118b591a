import { z } from 'zod';
import { toActions, toCheck } from '../../guardrails/store/index.js';
import { redactSecrets } from '../../lib/redact.js';
import { same } from './compare.js';

/**
 * The `guardrails` section of an apply file: guardrails known by slug, organisation-wide unless
 * `workspace` names one. The server checks the checks; configs later in the file may name them.
 */
export const guardrailEntry = z
  .object({
    slug: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'a guardrail slug is 1–63 lower-case letters, digits and dashes'),
    name: z.string().min(1).max(255),
    workspace: z.string().min(1).max(255).optional().describe('slug of the workspace; the organisation when left out'),
    checks: z.array(z.record(z.string(), z.unknown())).min(1),
    actions: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

export type DesiredGuardrail = z.infer<typeof guardrailEntry>;

/** A guardrail as `GET /v1/guardrails/{id}` shows it. */
export interface GuardrailRow {
  id: string;
  slug: string;
  name: string;
  workspace_id: string | null;
  checks?: unknown;
  actions?: unknown;
  [field: string]: unknown;
}

/** A step of the plan (plan.ts `Step`, which imports this file, hence its own type here). */
interface GuardrailStep {
  kind: 'guardrail';
  name: string;
  action: 'create' | 'update' | 'unchanged';
  changes: string[];
  request?: { method: 'POST' | 'PUT'; path: string; body: Record<string, unknown> };
}

/**
 * Steps for the file's guardrails. Checks and actions compare in the server's terms (defaults
 * filled, secret-looking parameters masked as the server shows them), so a second apply of the
 * same file changes nothing. A changed secret alone is therefore not seen: use `svcgw guardrails update`.
 */
export function planGuardrails(
  desired: readonly DesiredGuardrail[],
  current: readonly GuardrailRow[],
  workspaceOf: (row: { workspace_id: string | null }) => string | null,
  needWorkspace: (what: string, slug: string) => string,
  problems: string[],
): GuardrailStep[] {
  return desired.map((g) => {
    const ws = g.workspace === undefined ? null : needWorkspace(`guardrail ${g.slug}`, g.workspace);
    const now = current.find((row) => row.slug === g.slug);
    if (now && workspaceOf(now) !== ws)
      problems.push(
        `guardrail ${g.slug}: it belongs to ${workspaceOf(now) ?? 'the organisation'} on the server and cannot move`,
      );
    const body = { name: g.name, checks: g.checks, actions: g.actions };
    if (!now)
      return {
        kind: 'guardrail',
        name: g.slug,
        action: 'create',
        changes: ['name', 'checks', 'actions', ...(ws ? ['workspace'] : [])],
        request: {
          method: 'POST',
          path: '/v1/guardrails',
          body: { slug: g.slug, ...body, ...(ws ? { workspace_id: ws } : {}) },
        },
      };
    const changes = [
      ...(now.name === g.name ? [] : ['name']),
      ...(sameChecks(now.checks, g.checks) ? [] : ['checks']),
      ...(sameActions(now.actions, g.actions) ? [] : ['actions']),
    ];
    if (changes.length === 0) return { kind: 'guardrail', name: g.slug, action: 'unchanged', changes };
    return {
      kind: 'guardrail',
      name: g.slug,
      action: 'update',
      changes,
      request: { method: 'PUT', path: `/v1/guardrails/${encodeURIComponent(g.slug)}`, body },
    };
  });
}

function sameChecks(current: unknown, desired: DesiredGuardrail['checks']): boolean {
  const parsed = z
    .array(
      z
        .object({
          id: z.string(),
          parameters: z.record(z.string(), z.unknown()).optional(),
          name: z.string().optional(),
          is_enabled: z.boolean().optional(),
        })
        .strict(),
    )
    .safeParse(desired);
  if (!parsed.success) return false; // the server will say what is wrong
  const shown = parsed.data.map(toCheck).map((check) => ({ ...check, parameters: redactSecrets(check.parameters) }));
  return same(current, shown);
}

function sameActions(current: unknown, desired: DesiredGuardrail['actions']): boolean {
  try {
    return same(current, toActions(desired));
  } catch {
    return false;
  }
}
