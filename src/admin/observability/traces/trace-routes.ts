import { z } from 'zod';
import { notFound } from '../../../lib/errors.js';
import { BOTH_KEY_TYPES } from '../../../http/route-config.js';
import type { ZodApp } from '../../../http/zod-app.js';
import { idOrSlug, listBody, pageWindow, paginationQuery } from '../../shared/pagination.js';
import { resolveWorkspace } from '../../shared/workspace-access.js';
import type { ObservabilityDeps } from '../deps.js';
import { feedbackForTraces } from '../feedback/feedback-store.js';
import { toTraceObject } from './trace-object.js';
import { listTraces, MAX_SPANS, traceRequests } from './trace-queries.js';

const TAG = ['Traces'];
const listQuery = z
  .object({
    workspace_id: idOrSlug.optional(),
    start_time: z.iso.datetime({ offset: true }).optional(),
    end_time: z.iso.datetime({ offset: true }).optional(),
    ...paginationQuery,
  })
  .strict();
const iso = (value: string | undefined) => (value === undefined ? undefined : new Date(value).toISOString());

/**
 * Traces: the gateway requests that share a trace id (`x-service-trace-id`), as spans
 * (`x-service-span-id`, `x-service-parent-span-id`, `x-service-span-name`). Who sees which
 * requests is as for the logs routes, data visibility settings included.
 */
export function registerTraceRoutes(app: ZodApp, deps: ObservabilityDeps): void {
  app.get(
    '/v1/traces',
    {
      schema: { tags: TAG, summary: 'List traces, most recently active first', querystring: listQuery },
      config: { auth: { scope: 'logs.list', keyTypes: BOTH_KEY_TYPES } },
    },
    async (request) => {
      const principal = request.principal!;
      const q = request.query;
      const workspace = await resolveWorkspace(deps.repos.workspaces, principal, q.workspace_id, { required: false });
      const ownerId = await deps.visibility.ownDataOnly(principal);
      await deps.requestLogs.flush();
      const { total, rows } = await listTraces(deps.db, {
        organisationId: principal.organisationId,
        workspaceId: workspace?.id,
        ownerUserId: ownerId ?? undefined,
        startTime: iso(q.start_time),
        endTime: iso(q.end_time),
        ...pageWindow(q),
      });
      const data = rows.map((row) => ({
        trace_id: row.trace_id,
        name: row.name,
        workspace_id: row.workspace_id,
        started_at: row.started_at,
        duration_ms: Math.round(Number(row.duration_ms) * 1000) / 1000,
        requests: Number(row.requests),
        errors: Number(row.errors),
        total_tokens: row.total_tokens === null ? null : Number(row.total_tokens),
        cost: row.cost === null ? null : Number(row.cost),
        object: 'trace' as const,
      }));
      return listBody(data, total);
    },
  );

  app.get(
    '/v1/traces/:traceId',
    {
      schema: {
        tags: TAG,
        summary: 'Get a trace: every request in it as a span, and its feedback',
        params: z.object({ traceId: z.string().min(1).max(128) }),
      },
      config: { auth: { scope: 'logs.view', keyTypes: BOTH_KEY_TYPES } },
    },
    async (request) => {
      const principal = request.principal!;
      const traceId = request.params.traceId;
      const ownerId = await deps.visibility.ownDataOnly(principal);
      await deps.requestLogs.flush();
      const rows = await traceRequests(
        deps.db,
        {
          organisationId: principal.organisationId,
          workspaceId: principal.workspaceId ?? undefined,
          ownerUserId: ownerId ?? undefined,
        },
        traceId,
      );
      if (rows.length === 0) throw notFound('Trace');
      const truncated = rows.length > MAX_SPANS;
      const spans = truncated ? rows.slice(0, MAX_SPANS) : rows;
      // Feedback shows where it was given: in the workspaces of the requests shown.
      const workspaces = new Set(spans.map((row) => row.workspace_id));
      const feedback = (
        (await feedbackForTraces(deps.db, principal.organisationId, [traceId])).get(traceId) ?? []
      ).filter((f) => workspaces.has(f.workspace_id));
      return toTraceObject(traceId, spans, feedback, truncated);
    },
  );
}
