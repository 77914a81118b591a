import { z } from 'zod';
import { notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { LogVisibility } from '../settings/log-visibility.js';
import { BOTH_KEY_TYPES } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import type { RequestLogRepository } from '../../storage/repositories/request-logs.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import type { RequestLogWriter } from '../../telemetry/request-log-writer.js';
import type { Db } from '../../storage/database.js';
import { feedbackForTraces, formatLog, LOG_FORMATS } from '../observability/index.js';
import { toLogObject } from './log-object.js';
import { idOrSlug, listBody, pageWindow, paginationQuery } from '../shared/pagination.js';
import { assertWorkspaceReachable, resolveWorkspace } from '../shared/workspace-access.js';

const listLogsQuery = z
  .object({
    workspace_id: idOrSlug.optional(),
    api_key_id: z.uuid().optional(),
    provider: z.string().max(128).optional(),
    model: z.string().max(256).optional(),
    status_code: z.coerce.number().int().min(100).max(599).optional(),
    endpoint_type: z.string().max(64).optional(),
    trace_id: z.string().max(128).optional(),
    start_time: z.iso.datetime({ offset: true }).optional(),
    end_time: z.iso.datetime({ offset: true }).optional(),
    ...paginationQuery,
  })
  .strict();

const iso = (value: string | undefined) => (value === undefined ? undefined : new Date(value).toISOString());

/**
 * Request logs of the gateway. Pending batched records are flushed before a read, so that a
 * client sees its own requests at once on this instance. Workspace members and managers whose
 * data visibility setting is off see only the logs of their own API keys; another key's log is
 * a 404 to them, as if it did not exist.
 */
export function registerLogRoutes(
  app: ZodApp,
  deps: {
    db: Db;
    repo: RequestLogRepository;
    workspaces: WorkspaceRepository;
    writer: RequestLogWriter;
    visibility: LogVisibility;
  },
): void {
  app.get(
    '/v1/logs',
    {
      schema: { tags: ['Logs'], summary: 'List request logs, newest first', querystring: listLogsQuery },
      config: { auth: { scope: 'logs.list', keyTypes: BOTH_KEY_TYPES } },
    },
    async (request) => {
      const principal = request.principal!;
      const q = request.query;
      const workspace = await resolveWorkspace(deps.workspaces, principal, q.workspace_id, { required: false });
      const ownerId = await deps.visibility.ownDataOnly(principal);
      await deps.writer.flush();
      const filter = {
        organisationId: principal.organisationId,
        workspaceId: workspace?.id,
        apiKeyId: q.api_key_id,
        provider: q.provider,
        model: q.model,
        statusCode: q.status_code,
        endpointType: q.endpoint_type,
        traceId: q.trace_id,
        startTime: iso(q.start_time),
        endTime: iso(q.end_time),
        ...pageWindow(q),
      };
      const { total, totalIsLowerBound, rows } = await deps.repo.list({ ...filter, ownerUserId: ownerId ?? undefined });
      // Feedback belongs to the workspace of the key that gave it: a record shows its own workspace's.
      const feedback = await feedbackForTraces(
        deps.db,
        principal.organisationId,
        rows.map((row) => row.trace_id),
      );
      const withFeedback = (row: (typeof rows)[number]) =>
        (feedback.get(row.trace_id) ?? []).filter((item) => item.workspace_id === row.workspace_id);
      return {
        ...listBody(
          rows.map((row) => ({ ...toLogObject(row, false), feedback: withFeedback(row) })),
          total,
        ),
        // True when more rows match than were counted (LOG_TOTAL_BOUND): `total` is then "at least".
        total_is_lower_bound: totalIsLowerBound,
      };
    },
  );

  app.get(
    '/v1/logs/:logId',
    {
      schema: {
        tags: ['Logs'],
        summary: 'Get one request log, with bodies when they were recorded and the feedback on its trace',
        params: z.object({ logId: z.string().max(64) }),
        querystring: z
          .object({
            log_format: z
              .enum(LOG_FORMATS)
              .default('structured')
              .describe(
                "structured (the default): the reference's LogObject, {_id, request, response, metrics}; flat: svcgw's record as the list shows it, with bodies (docs/observability.md).",
              ),
          })
          .strict(),
      },
      config: { auth: { scope: 'logs.view', keyTypes: BOTH_KEY_TYPES } },
    },
    async (request) => {
      const principal = request.principal!;
      await deps.writer.flush();
      const row = isUuid(request.params.logId)
        ? await deps.repo.findById(principal.organisationId, request.params.logId)
        : undefined;
      if (!row) throw notFound('Log');
      assertWorkspaceReachable(principal, row.workspace_id);
      const ownerId = await deps.visibility.ownDataOnly(principal);
      if (ownerId !== null && !(await deps.visibility.ownsKey(principal.organisationId, ownerId, row.api_key_id)))
        throw notFound('Log');
      const feedback = await feedbackForTraces(deps.db, principal.organisationId, [row.trace_id], row.workspace_id);
      return formatLog(row, request.query.log_format, feedback.get(row.trace_id) ?? []);
    },
  );
}
