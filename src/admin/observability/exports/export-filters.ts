import { sql } from 'kysely';
import { z } from 'zod';
import { engineOf, type Db } from '../../../storage/database.js';

const METADATA_KEY_RE = /^[A-Za-z0-9_.-]{1,64}$/;
const STATUS_LIST_RE = /^\d{3}(,\d{3})*$/;

/**
 * Which logs an export holds. Names follow the established gateway's GenerationsFilterSchema
 * where it has one; `ai_org` (the provider) is ours, after the exported field of that name.
 */
export const exportFilters = z
  .object({
    time_of_generation_min: z.iso.datetime({ offset: true }).optional().describe('From this time (inclusive).'),
    time_of_generation_max: z.iso.datetime({ offset: true }).optional().describe('Up to this time (inclusive).'),
    api_key_ids: z.array(z.uuid()).max(100).optional().describe('Only requests made with these API keys.'),
    ai_org: z.string().min(1).max(128).optional().describe('Only this provider (openai, anthropic, …).'),
    ai_model: z.string().min(1).max(256).optional().describe('Only this model.'),
    ai_org_model: z.string().max(4000).optional().describe('Comma-separated provider__model pairs (openai__gpt-4o).'),
    status_code: z
      .union([z.number().int().min(100).max(599), z.string().regex(STATUS_LIST_RE)])
      .optional()
      .describe('A status, or comma-separated statuses.'),
    metadata: z
      .record(z.string().regex(METADATA_KEY_RE), z.string().max(1024))
      .optional()
      .describe('Every pair must match the request metadata.'),
    trace_id: z.string().min(1).max(128).optional(),
    cost_min: z.number().min(0).optional(),
    cost_max: z.number().min(0).optional(),
    total_units_min: z.number().int().min(0).optional(),
    total_units_max: z.number().int().min(0).optional(),
  })
  .strict();

export type ExportFilters = z.infer<typeof exportFilters>;

export interface ExportScope {
  organisationId: string;
  workspaceId: string | null;
  ownerUserId: string | null;
}

const iso = (value: string) => new Date(value).toISOString();

/** The request logs an export covers, as a query to add a selection, order and window to. */
export function matchingLogs(db: Db, scope: ExportScope, filters: ExportFilters) {
  let query = db.selectFrom('request_logs').where('organisation_id', '=', scope.organisationId);
  if (scope.workspaceId) query = query.where('workspace_id', '=', scope.workspaceId);
  if (scope.ownerUserId) {
    query = query.where(
      'api_key_id',
      'in',
      db
        .selectFrom('api_keys')
        .select('id')
        .where('organisation_id', '=', scope.organisationId)
        .where('user_id', '=', scope.ownerUserId),
    );
  }
  const f = filters;
  if (f.time_of_generation_min) query = query.where('created_at', '>=', iso(f.time_of_generation_min));
  if (f.time_of_generation_max) query = query.where('created_at', '<=', iso(f.time_of_generation_max));
  if (f.api_key_ids?.length) query = query.where('api_key_id', 'in', f.api_key_ids);
  if (f.ai_org) query = query.where('provider', '=', f.ai_org);
  if (f.ai_model) query = query.where('model', '=', f.ai_model);
  if (f.ai_org_model) {
    const pairs = f.ai_org_model
      .split(',')
      .map((pair) => pair.trim().split('__'))
      .filter((p): p is [string, string] => p.length === 2 && p[0]!.length > 0 && p[1]!.length > 0);
    query =
      pairs.length === 0
        ? query.where(sql<boolean>`1 = 0`)
        : query.where((eb) =>
            eb.or(pairs.map(([provider, model]) => eb.and([eb('provider', '=', provider), eb('model', '=', model)]))),
          );
  }
  if (f.status_code !== undefined) {
    const codes = typeof f.status_code === 'number' ? [f.status_code] : f.status_code.split(',').map(Number);
    query = query.where('status_code', 'in', codes);
  }
  for (const [key, value] of Object.entries(f.metadata ?? {})) {
    const held =
      engineOf(db) === 'postgres' ? sql`metadata::jsonb ->> ${key}` : sql`json_extract(metadata, ${`$."${key}"`})`;
    query = query.where(held, '=', value);
  }
  if (f.trace_id) query = query.where('trace_id', '=', f.trace_id);
  if (f.cost_min !== undefined) query = query.where('cost', '>=', f.cost_min);
  if (f.cost_max !== undefined) query = query.where('cost', '<=', f.cost_max);
  if (f.total_units_min !== undefined) query = query.where('total_tokens', '>=', f.total_units_min);
  if (f.total_units_max !== undefined) query = query.where('total_tokens', '<=', f.total_units_max);
  return query;
}

export async function countMatching(db: Db, scope: ExportScope, filters: ExportFilters): Promise<number> {
  const { n } = await matchingLogs(db, scope, filters)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(n);
}
