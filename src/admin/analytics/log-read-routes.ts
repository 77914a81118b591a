import { z } from 'zod';
import type { Principal } from '../../auth/principal.js';
import { BOTH_KEY_TYPES } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import type { ObservabilityDeps } from '../observability/deps.js';
import { listBody, pageWindow, paginationQuery } from '../shared/pagination.js';
import type { FeedbackAnalytics } from './feedback-analytics.js';
import {
  feedbackCountGraph,
  feedbackModelsGraph,
  feedbackScoresGraph,
  feedbackWeightedGraph,
} from './feedback-graphs.js';
import { defaultInterval, type Interval } from './graphs.js';
import type { LogAnalytics } from './log-analytics.js';
import {
  cacheHitRateGraph,
  cacheLatencyGraph,
  cacheSummary,
  errorStacksGraph,
  errorStatusCodesGraph,
  rescuedGraph,
  userRequestsGraph,
  usersGraph,
} from './log-graphs.js';
import { metadataGroups, modelGroups, userGroups } from './named-groups.js';
import { filterQuery, type FilterQuery } from './params.js';
import type { AnalyticsReader, RowFilter } from './reader.js';
import { rowFilter } from './row-scope.js';
import { graphQuery } from './routes.js';

const windowQuery = z.object(filterQuery).strict();
const pagedQuery = z.object({ ...filterQuery, ...paginationQuery }).strict();
const metadataParams = z.object({
  metadataKey: z.string().min(1).max(100).describe('The metadata key whose values are the groups.'),
});

export interface LogReadSources {
  reader: AnalyticsReader;
  logs: LogAnalytics;
  feedback: FeedbackAnalytics;
}

type TimeGraph = (s: LogReadSources, filter: RowFilter, interval: Interval) => Promise<unknown>;
type WindowGraph = (s: LogReadSources, filter: RowFilter) => Promise<unknown>;

/** Time series; `readsLogs`: read from request_logs rows or feedback (LOG_RETENTION_DISPLAY days back). */
const TIME_GRAPHS: Array<[name: string, summary: string, readsLogs: boolean, build: TimeGraph]> = [
  ['users', 'Distinct users (metadata _user) over time', true, (s, f, i) => usersGraph(s.logs, f, i)],
  ['users/requests', 'Requests per user over time', true, (s, f, i) => userRequestsGraph(s.logs, f, i)],
  ['errors/stacks', 'Errors of each status code over time', false, (s, f, i) => errorStacksGraph(s.reader, f, i)],
  [
    'requests/rescued',
    'Requests saved by retries or a fallback, over time',
    true,
    (s, f, i) => rescuedGraph(s.logs, f, i),
  ],
  [
    'cache/hit-rate',
    'Cache hits, their rate and what they saved, over time',
    false,
    (s, f, i) => cacheHitRateGraph(s.reader, s.logs, f, i),
  ],
  ['cache/latency', 'Average latency of cache hits over time', true, (s, f, i) => cacheLatencyGraph(s.logs, f, i)],
  ['feedbacks', 'Feedback given over time', true, (s, f, i) => feedbackCountGraph(s.feedback, f, i)],
  [
    'feedbacks/weighted',
    'Weighted average feedback over time',
    true,
    (s, f, i) => feedbackWeightedGraph(s.feedback, f, i),
  ],
];

/** Over the whole window, not per bucket. */
const WINDOW_GRAPHS: Array<[name: string, summary: string, readsLogs: boolean, build: WindowGraph]> = [
  ['errors/status-codes', 'Errors per status code', false, (s, f) => errorStatusCodesGraph(s.reader, f)],
  ['feedbacks/scores', 'Feedback given per score (−10 to 10)', true, (s, f) => feedbackScoresGraph(s.feedback, f)],
  ['feedbacks/ai-models', 'Feedback per model of its traces', true, (s, f) => feedbackModelsGraph(s.feedback, f)],
];

const AUTH = { scope: 'analytics.view', keyTypes: BOTH_KEY_TYPES } as const;
const TAGS = ['Analytics'];

/**
 * The analytics the reference gateway has beyond the rollup graphs: users, error stacks and
 * status codes, rescued requests, cache latency, feedback, the cache summary and the users,
 * models and metadata groups (docs/analytics.md). The same filters, visibility and flush as
 * the other analytics routes.
 */
export function registerLogReadRoutes(app: ZodApp, deps: ObservabilityDeps, sources: LogReadSources): void {
  const rows = async (principal: Principal, query: FilterQuery, readsLogs: boolean): Promise<RowFilter> => {
    const filter = await rowFilter(deps, principal, query, { analytics: true, readsLogs });
    await deps.requestLogs.flush();
    return filter;
  };

  for (const [name, summary, readsLogs, build] of TIME_GRAPHS) {
    app.get(
      `/v1/analytics/graphs/${name}`,
      { schema: { tags: TAGS, summary, querystring: graphQuery }, config: { auth: AUTH } },
      async (request) => {
        const filter = await rows(request.principal!, request.query, readsLogs);
        return build(sources, filter, request.query.interval ?? defaultInterval(filter.from, filter.to));
      },
    );
  }
  for (const [name, summary, readsLogs, build] of WINDOW_GRAPHS) {
    app.get(
      `/v1/analytics/graphs/${name}`,
      { schema: { tags: TAGS, summary, querystring: windowQuery }, config: { auth: AUTH } },
      async (request) => build(sources, await rows(request.principal!, request.query, readsLogs)),
    );
  }

  app.get(
    '/v1/analytics/summary/cache',
    {
      schema: { tags: TAGS, summary: 'Cache hits, their latency and the speed-up they gave', querystring: windowQuery },
      config: { auth: AUTH },
    },
    async (request) => cacheSummary(sources.logs, await rows(request.principal!, request.query, true)),
  );

  app.get(
    '/v1/analytics/groups/users',
    {
      schema: { tags: TAGS, summary: 'Requests and cost per user (metadata _user)', querystring: pagedQuery },
      config: { auth: AUTH },
    },
    async (request) => {
      const { total, data } = await userGroups(
        sources.logs,
        await rows(request.principal!, request.query, true),
        pageWindow(request.query),
      );
      return listBody(data, total);
    },
  );
  app.get(
    '/v1/analytics/groups/ai-models',
    { schema: { tags: TAGS, summary: 'Requests per model', querystring: pagedQuery }, config: { auth: AUTH } },
    async (request) => {
      const { total, data } = await modelGroups(
        sources.reader,
        await rows(request.principal!, request.query, false),
        pageWindow(request.query),
      );
      return listBody(data, total);
    },
  );
  app.get(
    '/v1/analytics/groups/metadata/:metadataKey',
    {
      schema: {
        tags: TAGS,
        summary: 'Requests, cost, tokens and feedback per value of a metadata key',
        params: metadataParams,
        querystring: pagedQuery,
      },
      config: { auth: AUTH },
    },
    async (request) => {
      const { total, data } = await metadataGroups(
        sources.logs,
        await rows(request.principal!, request.query, true),
        request.params.metadataKey,
        pageWindow(request.query),
      );
      return listBody(data, total);
    },
  );
}
