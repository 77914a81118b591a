import { z } from 'zod';
import type { Principal } from '../../auth/principal.js';
import { BOTH_KEY_TYPES } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import type { ObservabilityDeps } from '../observability/deps.js';
import { listBody, pageWindow, paginationQuery } from '../shared/pagination.js';
import { COLUMN_NAMES, GROUP_BYS, parseColumns, parseGroupBy } from './columns.js';
import { defaultInterval, graph, INTERVALS, METRICS, type Interval } from './graphs.js';
import { groups, type GroupRow } from './groups.js';
import { filterQuery, type FilterQuery } from './params.js';
import type { AnalyticsReader, RowFilter } from './reader.js';
import { rowFilter } from './row-scope.js';
import { summary } from './summary.js';

const groupsQuery = z
  .object({
    ...filterQuery,
    columns: z
      .string()
      .max(1024)
      .optional()
      .describe(`Comma-separated extra columns: ${COLUMN_NAMES.join(', ')}. Without it only \`requests\` is returned.`),
    ...paginationQuery,
  })
  .strict();
const summaryQuery = z.object(filterQuery).strict();
export const graphQuery = z
  .object({
    ...filterQuery,
    interval: z
      .enum(Object.keys(INTERVALS) as [Interval, ...Interval[]])
      .optional()
      .describe('Bucket size; default hour for windows up to 2 days, else day.'),
  })
  .strict();
const groupParams = z.object({
  groupBy: z
    .string()
    .max(64)
    .describe(`One of ${GROUP_BYS.join(', ')}.`),
});

/**
 * Analytics over request logs: grouped (also under /v1/logs/groups), a summary, and graphs per
 * metric. This instance's pending log records are flushed first, so that they count at once.
 */
export function registerAnalyticsRoutes(app: ZodApp, deps: ObservabilityDeps, reader: AnalyticsReader): void {
  const rows = async (principal: Principal, query: FilterQuery, analytics: boolean): Promise<RowFilter> => {
    const filter = await rowFilter(deps, principal, query, { analytics });
    await deps.requestLogs.flush();
    return filter;
  };

  for (const [prefix, tag, scope, analytics] of [
    ['/v1/analytics', 'Analytics', 'analytics.view', true],
    ['/v1/logs', 'Logs', 'logs.list', false],
  ] as const) {
    app.get(
      `${prefix}/groups/:groupBy`,
      {
        schema: {
          tags: [tag],
          summary: 'Requests grouped by a dimension, with selected columns',
          params: groupParams,
          querystring: groupsQuery,
        },
        config: { auth: { scope, keyTypes: BOTH_KEY_TYPES } },
      },
      async (request) => {
        const groupBy = parseGroupBy(request.params.groupBy);
        const columns = parseColumns(request.query.columns);
        const filter = await rows(request.principal!, request.query, analytics);
        const { total, data } = await groups(reader, filter, groupBy, columns, pageWindow(request.query));
        return listBody(
          groupBy === 'workspace' ? await withWorkspaceNames(deps, request.principal!.organisationId, data) : data,
          total,
        );
      },
    );
  }

  app.get(
    '/v1/analytics/summary',
    {
      schema: {
        tags: ['Analytics'],
        summary: 'Requests, cost, tokens, latency percentiles, errors and cache hits of a window',
        querystring: summaryQuery,
      },
      config: { auth: { scope: 'analytics.view', keyTypes: BOTH_KEY_TYPES } },
    },
    async (request) => summary(reader, await rows(request.principal!, request.query, true)),
  );

  for (const [name, metric] of Object.entries(METRICS)) {
    app.get(
      `/v1/analytics/graphs/${name}`,
      {
        schema: {
          tags: ['Analytics'],
          summary: `Time series of ${name.replace('/', ' ')}, zero-filled buckets`,
          querystring: graphQuery,
        },
        config: { auth: { scope: 'analytics.view', keyTypes: BOTH_KEY_TYPES } },
      },
      async (request) => {
        const filter = await rows(request.principal!, request.query, true);
        return graph(reader, filter, metric, request.query.interval ?? defaultInterval(filter.from, filter.to));
      },
    );
  }
}

/** Workspace groups also carry the workspace's slug and name, for people reading them. */
async function withWorkspaceNames(
  deps: ObservabilityDeps,
  organisationId: string,
  data: GroupRow[],
): Promise<GroupRow[]> {
  const ids = data.map((row) => row.workspace).filter((id): id is string => typeof id === 'string');
  if (ids.length === 0) return data;
  const found = await deps.db
    .selectFrom('workspaces')
    .select(['id', 'slug', 'name'])
    .where('organisation_id', '=', organisationId)
    .where('id', 'in', ids)
    .execute();
  const byId = new Map(found.map((w) => [w.id, w]));
  return data.map((row) => {
    const w = byId.get(row.workspace as string);
    return { ...row, workspace_slug: w?.slug ?? null, workspace_name: w?.name ?? null, object: 'analytics-group' };
  });
}
