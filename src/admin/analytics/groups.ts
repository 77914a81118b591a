import { aggregate, type RowFilter } from './aggregate.js';
import { columnValues, DIMENSIONS, needsLatencies, type ColumnName, type GroupBy } from './columns.js';
import type { LogStore } from './log-store.js';

export interface GroupRow {
  [field: string]: unknown;
  object: 'analytics-group';
}

/**
 * Requests grouped by one dimension, most requests first (ties by value, nulls last), one page
 * of them; columns are computed only for the groups on the page.
 */
export function groups(store: LogStore, filter: RowFilter, groupBy: GroupBy, columns: readonly ColumnName[], page: { limit: number; offset: number }) {
  const dimension = DIMENSIONS[groupBy];
  const totals = aggregate(store, filter, dimension.groupOf, { latencies: needsLatencies(columns) });
  const ordered = [...totals.entries()]
    .map(([key, t]) => ({ label: dimension.label(store, key), t }))
    .sort((a, b) => b.t.requests - a.t.requests || compareLabels(a.label, b.label));
  const data: GroupRow[] = ordered.slice(page.offset, page.offset + page.limit).map(({ label, t }) => ({ [groupBy]: label, ...columnValues(t, columns), object: 'analytics-group' }));
  return { total: ordered.length, data };
}

function compareLabels(a: string | number | null, b: string | number | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b));
}
