import { totalsHelpers } from './columns.js';
import type { GroupRow } from './groups.js';
import type { LogAnalytics, MetadataGroup } from './log-analytics.js';
import { USER_METADATA_KEY } from './metadata-keys.js';
import type { AnalyticsReader, RowFilter } from './reader.js';
import { costFields } from './reference-units.js';

const { average } = totalsHelpers;

type Page = { limit: number; offset: number };

/** Most requests first, ties by value. */
const byRequests = (a: MetadataGroup, b: MetadataGroup) => b.requests - a.requests || a.value.localeCompare(b.value);

function page<T>(rows: T[], window: Page): { total: number; data: T[] } {
  return { total: rows.length, data: rows.slice(window.offset, window.offset + window.limit) };
}

function stringCents(usd: number) {
  const { cost, cost_usd } = costFields('cost', usd);
  return { cost: String(cost), cost_usd };
}

/** `groups/users`: requests and cost per user (metadata `_user`). */
export async function userGroups(logs: LogAnalytics, filter: RowFilter, window: Page) {
  const rows = (await logs.byMetadata(filter, USER_METADATA_KEY)).sort(byRequests);
  return page(
    rows.map((g): GroupRow => ({
      // The reference types both as strings; the cents' companion cost_usd stays a number.
      user: g.value,
      requests: String(g.requests),
      ...stringCents(g.cost),
      object: 'analytics-group',
    })),
    window,
  );
}

/** `groups/ai-models`: requests per model. */
export async function modelGroups(reader: AnalyticsReader, filter: RowFilter, window: Page) {
  const totals = await reader.aggregate(filter, { by: 'column', column: 'model' }, { latencies: false });
  const rows = [...totals.entries()]
    .map(([model, t]) => ({ ai_model: model === '' ? null : String(model), requests: t.requests }))
    .sort(
      (a, b) =>
        b.requests - a.requests ||
        (a.ai_model === null ? 1 : b.ai_model === null ? -1 : a.ai_model.localeCompare(b.ai_model)),
    );
  return page(
    rows.map((row): GroupRow => ({ ...row, object: 'analytics-group' })),
    window,
  );
}

/** `groups/metadata/{metadataKey}`: requests, cost, tokens, feedback and last request per value of the key. */
export async function metadataGroups(logs: LogAnalytics, filter: RowFilter, key: string, window: Page) {
  const rows = (await logs.byMetadata(filter, key)).sort(byRequests);
  return page(
    rows.map((g): GroupRow => ({
      metadata_value: g.value,
      requests: g.requests,
      ...costFields('cost', g.cost),
      avg_tokens: average(g.tokenSum, g.tokenRows),
      avg_weighted_feedback: g.feedbackWeights > 0 ? Number((g.feedbackWeighted / g.feedbackWeights).toFixed(3)) : null,
      requests_with_feedback: g.withFeedback,
      last_seen: new Date(g.last).toISOString(),
      object: 'analytics-group',
    })),
    window,
  );
}
