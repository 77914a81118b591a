import type { Selectable } from 'kysely';
import type { RequestLogsTable } from '../../../storage/schema.js';

/**
 * The fields an export may hold (`requested_data`), named as the established gateway names
 * them, each read from our request log row. `request` and `response` are the recorded bodies
 * (null when bodies were not recorded); `request_url` is the gateway path the client called.
 */
const FIELDS = {
  id: (r) => r.id,
  trace_id: (r) => r.trace_id,
  created_at: (r) => r.created_at,
  request: (r) => parseBody(r.request_body),
  response: (r) => parseBody(r.response_body),
  is_success: (r) => r.is_success === 1,
  ai_org: (r) => r.provider,
  ai_model: (r) => r.model,
  req_units: (r) => r.prompt_tokens,
  res_units: (r) => r.completion_tokens,
  total_units: (r) => r.total_tokens,
  request_url: (r) => r.path,
  cost: (r) => r.cost,
  cost_currency: (r) => r.cost_currency,
  response_time: (r) => r.latency_ms,
  response_status_code: (r) => r.status_code,
  mode: (r) => (r.config_id === null ? 'single' : null),
  config: (r) => r.config_id,
  prompt_slug: (r) => r.prompt_id,
  metadata: (r) => (r.metadata === null ? null : (JSON.parse(r.metadata) as unknown)),
} satisfies Record<string, (row: Selectable<RequestLogsTable>) => unknown>;

export type ExportField = keyof typeof FIELDS;
export const EXPORT_FIELDS = Object.keys(FIELDS) as [ExportField, ...ExportField[]];

function parseBody(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** One exported record: the requested fields, in the order requested. */
export function exportRecord(
  row: Selectable<RequestLogsTable>,
  fields: readonly ExportField[],
): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const field of fields) record[field] = FIELDS[field](row);
  return record;
}

/** RFC 4180: a cell is quoted when it holds a comma, quote or line break; quotes are doubled. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = cellText(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export const csvLine = (values: readonly unknown[]): string => `${values.map(csvCell).join(',')}\r\n`;

function cellText(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    default:
      return JSON.stringify(value) ?? '';
  }
}
