import { z } from 'zod';
import { invalid } from '../../lib/errors.js';
import { idOrSlug } from '../shared/pagination.js';
import { rowFilterNames, type RowFilterName } from './row-conditions.js';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;
/** Without start_time, analytics cover the last 7 days. */
export const DEFAULT_WINDOW_MS = 7 * DAY_MS;

/** Query parameters every analytics route takes. */
export const filterQuery = {
  start_time: z.iso
    .datetime({ offset: true })
    .optional()
    .describe(
      'From this time (ISO 8601, inclusive); default: end_time minus 7 days; never before METRICS_RETENTION_DISPLAY days ago (LOG_RETENTION_DISPLAY with a metadata filter).',
    ),
  end_time: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('Up to this time (ISO 8601, inclusive); default: now.'),
  workspace_id: idOrSlug
    .optional()
    .describe('Only this workspace (id or slug); workspace keys always see only their own.'),
  api_key_id: z.uuid().optional().describe('Only requests made with this API key.'),
  provider: z.string().max(128).optional().describe('Only this provider type (request_logs.provider, such as openai).'),
  model: z.string().max(256).optional().describe('Only this model.'),
  status_code: z
    .string()
    .regex(/^\d{3}(,\d{3})*$/, 'status_code must be comma-separated HTTP status codes')
    .optional()
    .describe('Only these HTTP status codes, comma-separated.'),
  guardrail_verdict: z
    .enum(['passed', 'failed', 'denied'])
    .optional()
    .describe('Only requests whose guardrails passed, failed (let through with 246) or denied them (446).'),
  metadata: z
    .string()
    .max(4096)
    .optional()
    .describe('JSON object of key → value; only requests whose metadata holds every pair.'),
  time_of_generation_min: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('start_time, as the reference gateway names it.'),
  time_of_generation_max: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('end_time, as the reference gateway names it.'),
  workspace_slug: idOrSlug.optional().describe('workspace_id, as the reference gateway names it (a slug or an id).'),
  ...referenceRowFilters(),
};

/** The reference's per-request filters (row-conditions.ts checks and applies them). */
function referenceRowFilters() {
  const help: Record<RowFilterName, string> = {
    total_units_min: 'Only requests of at least this many tokens.',
    total_units_max: 'Only requests of at most this many tokens.',
    cost_min: 'Only requests that cost at least this much (US cents).',
    cost_max: 'Only requests that cost at most this much (US cents).',
    prompt_token_min: 'Only requests of at least this many prompt tokens.',
    prompt_token_max: 'Only requests of at most this many prompt tokens.',
    completion_token_min: 'Only requests of at least this many completion tokens.',
    completion_token_max: 'Only requests of at most this many completion tokens.',
    api_key_ids: 'Only requests made with these API keys (ids, comma-separated).',
    ai_org_model: 'Only these provider__model pairs, comma-separated (openai__gpt-4o).',
    trace_id: 'Only requests of this trace.',
    span_id: 'Only requests of this span.',
    configs: 'Only requests routed by these configs (ids or slugs, comma-separated).',
    prompt_slug: 'Only runs of this prompt (slug or id).',
    virtual_keys: 'Only requests made with these virtual keys (slugs, comma-separated).',
    weighted_feedback_min: "Only requests whose trace's weighted feedback is at least this (-10 to 10).",
    weighted_feedback_max: "Only requests whose trace's weighted feedback is at most this (-10 to 10).",
  };
  return Object.fromEntries(
    rowFilterNames.map((name) => [name, z.string().max(4096).optional().describe(help[name])]),
  ) as Record<RowFilterName, z.ZodOptional<z.ZodString>>;
}

/** The reference gateway's names of three filters, and ours. */
const SYNONYMS = [
  ['time_of_generation_min', 'start_time'],
  ['time_of_generation_max', 'end_time'],
  ['workspace_slug', 'workspace_id'],
] as const;

/**
 * The query with the reference's names folded into ours; both names of one filter with
 * different values is a 400 naming the reference's.
 */
export function foldSynonyms(query: FilterQuery): FilterQuery {
  const out: FilterQuery = { ...query };
  for (const [theirs, ours] of SYNONYMS) {
    const a = query[ours];
    const b = query[theirs];
    if (a !== undefined && b !== undefined && a !== b)
      throw invalid(theirs, `${theirs} and ${ours} are the same filter; send one.`);
    out[ours] = a ?? b;
    delete out[theirs];
  }
  return out;
}

export type FilterQuery = { [K in keyof typeof filterQuery]?: string | undefined };

export interface TimeWindow {
  from: number;
  to: number;
}

export interface Retention {
  /** LOG_RETENTION_DISPLAY: request_logs rows are kept this many days. */
  logDays: number;
  /** METRICS_RETENTION_DISPLAY: rollups are kept this many days. */
  metricsDays: number;
}

/**
 * The window a query covers. Rollups reach back METRICS_RETENTION_DISPLAY days, from the start
 * of the first UTC day kept whole; queries with a metadata filter read request_logs, which reach
 * back LOG_RETENTION_DISPLAY days. Parts of hours are read from request_logs, so an edge older
 * than LOG_RETENTION_DISPLAY (whose rows may be gone) is widened to its whole hour.
 */
export function timeWindow(
  query: Pick<FilterQuery, 'start_time' | 'end_time'>,
  now: number,
  retention: Retention,
  options: { metadata: boolean },
): TimeWindow {
  let to = query.end_time === undefined ? now : Date.parse(query.end_time);
  let from = query.start_time === undefined ? to - DEFAULT_WINDOW_MS : Date.parse(query.start_time);
  if (from > to) throw invalid('start_time', 'start_time must not be after end_time.');
  const rawSince = now - retention.logDays * DAY_MS;
  if (options.metadata) return { from: Math.max(from, rawSince), to };
  from = Math.max(from, Math.floor((now - retention.metricsDays * DAY_MS) / DAY_MS) * DAY_MS);
  if (from < rawSince) from = Math.floor(from / HOUR_MS) * HOUR_MS;
  if (to < rawSince) to = Math.ceil((to + 1) / HOUR_MS) * HOUR_MS - 1;
  return { from, to: Math.max(from, to) };
}

export function parseMetadata(value: string | undefined): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw invalid('metadata', 'metadata must be a JSON object such as {"env":"prod"}.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw invalid('metadata', 'metadata must be a JSON object such as {"env":"prod"}.');
  const entries = Object.entries(parsed as Record<string, unknown>);
  for (const [key, v] of entries)
    if (typeof v !== 'string')
      throw invalid('metadata', `metadata.${key} must be a string (request metadata values are strings).`);
  // {} holds for every request: no filter.
  return entries.length === 0 ? undefined : (Object.fromEntries(entries) as Record<string, string>);
}

export const parseStatusCodes = (value: string | undefined): number[] | undefined => value?.split(',').map(Number);
