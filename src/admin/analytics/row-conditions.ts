import { invalid } from '../../lib/errors.js';
import type { Db } from '../../storage/database.js';

/** A condition on request_logs columns, with `?` placeholders, and its parameters. */
export interface RowCondition {
  sql: string;
  params: unknown[];
}

/** The reference's analytics filters on single requests (values of request_logs columns). */
export const rowFilterNames = [
  'total_units_min',
  'total_units_max',
  'cost_min',
  'cost_max',
  'prompt_token_min',
  'prompt_token_max',
  'completion_token_min',
  'completion_token_max',
  'api_key_ids',
  'ai_org_model',
  'trace_id',
  'span_id',
  'configs',
  'prompt_slug',
  'virtual_keys',
  'weighted_feedback_min',
  'weighted_feedback_max',
] as const;

export type RowFilterName = (typeof rowFilterNames)[number];
export type RowFilterQuery = { [K in RowFilterName]?: string | undefined };

const RANGES = [
  ['total_units', 'total_tokens', 1],
  ['prompt_token', 'prompt_tokens', 1],
  ['completion_token', 'completion_tokens', 1],
  // The reference's cost filters are cents; request_logs.cost is US dollars.
  ['cost', 'cost', 0.01],
] as const;

const list = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

/** An empty list matches nothing. */
const inList = (column: string, values: readonly unknown[]): RowCondition =>
  values.length === 0
    ? { sql: '1 = 0', params: [] }
    : { sql: `${column} IN (${values.map(() => '?').join(', ')})`, params: [...values] };

/**
 * The request_logs conditions of the reference's per-request filters. Configs and prompts are
 * named by id or slug and looked up in the caller's organisation; a name that matches none
 * matches no request.
 */
export async function rowConditions(db: Db, organisationId: string, query: RowFilterQuery): Promise<RowCondition[]> {
  const out: RowCondition[] = [];
  for (const [name, column, scale] of RANGES) {
    for (const [end, op] of [
      ['min', '>='],
      ['max', '<='],
    ] as const) {
      const key = `${name}_${end}` as keyof RowFilterQuery;
      const raw = query[key];
      if (raw === undefined) continue;
      const value = Number(raw);
      // Token counts are integer columns (PostgreSQL refuses 0.5 for one): whole numbers only.
      if (raw.trim() === '' || !Number.isFinite(value) || value < 0 || (name !== 'cost' && !Number.isInteger(value)))
        throw invalid(
          key,
          name === 'cost'
            ? `${key} must be a number of 0 or more (cents).`
            : `${key} must be a whole number of 0 or more.`,
        );
      out.push({ sql: `${column} ${op} ?`, params: [value * scale] });
    }
  }
  if (query.api_key_ids !== undefined) out.push(inList('api_key_id', list(query.api_key_ids)));
  if (query.trace_id !== undefined) out.push({ sql: 'trace_id = ?', params: [query.trace_id] });
  if (query.span_id !== undefined) out.push({ sql: 'span_id = ?', params: [query.span_id] });
  if (query.ai_org_model !== undefined) {
    const pairs = list(query.ai_org_model).map((item) => {
      const at = item.indexOf('__');
      if (at <= 0 || at + 2 >= item.length)
        throw invalid(
          'ai_org_model',
          `ai_org_model takes provider__model pairs, comma-separated (openai__gpt-4o); got ${item}.`,
        );
      return [item.slice(0, at), item.slice(at + 2)];
    });
    // No pair (`ai_org_model=` or only commas) matches nothing, as an empty list does in the other filters.
    out.push(
      pairs.length === 0
        ? { sql: '1 = 0', params: [] }
        : { sql: `(${pairs.map(() => '(provider = ? AND model = ?)').join(' OR ')})`, params: pairs.flat() },
    );
  }
  if (query.configs !== undefined) {
    const names = list(query.configs);
    const found = await db
      .selectFrom('configs')
      .select('id')
      .where('organisation_id', '=', organisationId)
      .where((eb) => eb.or([eb('id', 'in', names), eb('slug', 'in', names)]))
      .execute();
    out.push(
      inList(
        'config_id',
        found.map((c) => c.id),
      ),
    );
  }
  if (query.prompt_slug !== undefined) {
    const found = await db
      .selectFrom('prompts')
      .select('id')
      .where('organisation_id', '=', organisationId)
      .where((eb) => eb.or([eb('slug', '=', query.prompt_slug!), eb('id', '=', query.prompt_slug!)]))
      .execute();
    out.push(
      inList(
        'prompt_id',
        found.map((p) => p.id),
      ),
    );
  }
  if (query.virtual_keys !== undefined)
    out.push(
      inList(
        'credential_source',
        list(query.virtual_keys).map((slug) => `virtual_key:${slug.replace(/^@/, '')}`),
      ),
    );
  out.push(...feedbackConditions(organisationId, query));
  return out;
}

/**
 * `weighted_feedback_min/max`: requests whose trace's feedback averages (Σ value·weight / Σ
 * weight) within the range; requests without feedback are left out. Written without a division,
 * so that weights of 0 only never divide by zero.
 */
function feedbackConditions(organisationId: string, query: RowFilterQuery): RowCondition[] {
  const having: string[] = [];
  const params: unknown[] = [organisationId];
  for (const [end, op] of [
    ['min', '>='],
    ['max', '<='],
  ] as const) {
    const key = `weighted_feedback_${end}` as const;
    const raw = query[key];
    if (raw === undefined) continue;
    const value = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(value) || value < -10 || value > 10)
      throw invalid(key, `${key} must be a number from -10 to 10.`);
    having.push(`sum(value * weight) ${op} ? * sum(weight)`);
    params.push(value);
  }
  if (having.length === 0) return [];
  return [
    {
      sql: `trace_id IN (SELECT trace_id FROM feedback WHERE organisation_id = ? GROUP BY trace_id HAVING sum(weight) > 0 AND ${having.join(' AND ')})`,
      params,
    },
  ];
}
