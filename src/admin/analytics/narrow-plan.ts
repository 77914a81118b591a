import type { NarrowDimension } from '../../storage/repositories/request-logs.js';
import type { Grouping, RowFilter } from './row-filter.js';

/** How `analytics_narrow_rollups` answer a query. */
export interface NarrowPlan {
  /** The metadata pair of the filter ('' and '': none). */
  metadataKey: string;
  metadataValue: string;
  /** The one dimension the query filters or groups by; '' (only with a pair): none. */
  dimension: NarrowDimension | '';
  /** The values of `dimension` the filter allows, as text; null: every value. */
  values: string[] | null;
  /** The group expression over narrow rows: the value, the workspace, a time bucket or a constant. */
  group: string;
}

/**
 * Every request has exactly one value of each dimension ('' for none), so the narrow rows of one
 * dimension summed over all its values are the totals. The guardrail verdict has the fewest
 * values (none, passed, failed): per workspace and hour at most three rows, where
 * `analytics_key_rollups` holds one per key.
 */
const TOTALS_DIMENSION: NarrowDimension = 'guardrail_verdict';

/**
 * The narrow rows that answer a query, if any: a filter and grouping that name one dimension at
 * most (besides the workspace and `pair`: what metadata rollups answer the filter's metadata
 * with, a summed pair or combination), with no key filter, no per-key
 * visibility and no per-request condition. A query that names no dimension (and no pair) reads
 * the totals: every value of TOTALS_DIMENSION.
 */
export function narrowPlan(
  filter: RowFilter,
  grouping: Grouping,
  pair: { key: string; value: string } | null,
): NarrowPlan | null {
  if (filter.apiKeyId !== undefined || filter.visibleKeyIds !== null || (filter.rows?.length ?? 0) > 0) return null;
  if (pair === null && Object.keys(filter.metadata ?? {}).length > 0) return null;
  const filtered = new Map<NarrowDimension, string[]>();
  if (filter.provider !== undefined) filtered.set('provider', [filter.provider]);
  if (filter.model !== undefined) filtered.set('model', [filter.model]);
  if (filter.guardrailVerdict !== undefined) filtered.set('guardrail_verdict', [filter.guardrailVerdict]);
  if (filter.statusCodes && filter.statusCodes.length > 0) filtered.set('status_code', filter.statusCodes.map(String));
  const dimensions = new Set(filtered.keys());
  let group: string;
  if (grouping.by === 'column') {
    const column = grouping.column;
    if (column === 'api_key_id') return null;
    if (column === 'workspace_id') group = 'workspace_id';
    else {
      dimensions.add(column);
      group = column === 'status_code' ? 'CAST(value AS INTEGER)' : 'value';
    }
  } else if (grouping.by === 'time') group = grouping.interval === 'hour' ? 'period_start' : 'period_start / 24';
  else group = '0';
  if (dimensions.size > 1) return null;
  const dimension = [...dimensions][0] ?? (pair ? '' : TOTALS_DIMENSION);
  return {
    metadataKey: pair?.key ?? '',
    metadataValue: pair?.value ?? '',
    dimension,
    values: dimension === '' ? null : (filtered.get(dimension) ?? null),
    group,
  };
}
