import { columnValues, DIMENSIONS, groupLabel, needsLatencies, type ColumnName, type GroupBy } from './columns.js';
import type { AnalyticsReader, RowFilter } from './reader.js';

export interface GroupRow {
  [field: string]: unknown;
  object: 'analytics-group';
}

/**
 * Requests grouped by one dimension, most requests first (ties by value, nulls last), one page
 * of them.
 */
export async function groups(
  reader: AnalyticsReader,
  filter: RowFilter,
  groupBy: GroupBy,
  columns: readonly ColumnName[],
  page: { limit: number; offset: number },
) {
  const totals = await reader.aggregate(
    filter,
    { by: 'column', column: DIMENSIONS[groupBy] },
    { latencies: needsLatencies(columns) },
  );
  const ordered = [...totals.entries()]
    .map(([key, t]) => ({ label: groupLabel(key), t }))
    .sort((a, b) => b.t.requests - a.t.requests || compareLabels(a.label, b.label));
  const data: GroupRow[] = ordered
    .slice(page.offset, page.offset + page.limit)
    .map(({ label, t }) => ({ [groupBy]: label, ...columnValues(t, columns), object: 'analytics-group' }));
  return { total: ordered.length, data };
}

function compareLabels(a: string | number | null, b: string | number | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b));
}
