import { z } from 'zod';
import type { Config } from '../../config/schema.js';
import { BOTH_KEY_TYPES } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import type { Clock } from '../../lib/clock.js';
import { invalid } from '../../lib/errors.js';
import type { PricingService } from '../../pricing/pricing-service.js';
import type { RequestLogRepository } from '../../storage/repositories/request-logs.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import { idOrSlug } from '../shared/pagination.js';
import { resolveWorkspace } from '../shared/workspace-access.js';
import { auditSummary, customLogsBody, MAX_CUSTOM_LOGS, toRequestLog } from './custom-log.js';

/**
 * `POST /v1/logs`: request log records of calls made outside the gateway (the reference
 * gateway's "insert new logs"), stored like the gateway's own: they show in the logs, traces,
 * exports and analytics of their workspace. They are history, not traffic: limits and budgets
 * do not count them. A workspace key writes into its own workspace only.
 */
export function registerLogInsertRoute(
  app: ZodApp,
  deps: {
    config: Config;
    clock: Clock;
    repo: RequestLogRepository;
    workspaces: WorkspaceRepository;
    pricing: PricingService;
  },
): void {
  app.post(
    '/v1/logs',
    {
      schema: {
        tags: ['Logs'],
        summary: 'Insert request log records of calls made outside the gateway',
        description: `A record or an array of up to ${MAX_CUSTOM_LOGS}: {request: {url, method?, body}, response: {status?, body, response_time?}, metadata?}. Tokens come from response.body.usage, the cost from the prices of the provider whose host the URL names. Bodies are stored only when LOG_BODIES is on. Answers 200 with no body, as the reference gateway does.`,
        querystring: z
          .object({
            workspace_id: idOrSlug
              .optional()
              .describe(
                'Admin keys: the workspace (id or slug); the default workspace when left out. Workspace keys: their own.',
              ),
          })
          .strict(),
        body: customLogsBody,
      },
      config: {
        auth: { scope: 'logs.create', keyTypes: BOTH_KEY_TYPES },
        audit: { resourceType: 'request_log', action: 'create', recordBody: auditSummary },
      },
    },
    async (request, reply) => {
      const principal = request.principal!;
      const workspace =
        (await resolveWorkspace(deps.workspaces, principal, request.query.workspace_id, { required: false })) ??
        (await deps.workspaces.findDefault(principal.organisationId));
      if (!workspace)
        throw invalid('workspace_id', 'The organisation has no default workspace; name one in workspace_id.');
      if (workspace.status === 'archived')
        throw invalid(
          'workspace_id',
          `Workspace ${workspace.slug} is archived; unarchive it before writing logs into it.`,
        );
      request.auditWorkspaceId = workspace.id;
      const now = deps.clock.now();
      const capture = deps.config.log_bodies ? deps.config.log_body_max_bytes : 0;
      const rows = await Promise.all(
        request.body.map(async (entry) => {
          const { row, provider, usage } = toRequestLog(entry, {
            principal,
            workspaceId: workspace.id,
            requestId: request.id,
            now,
            capture,
          });
          if (usage) row.cost = await deps.pricing.costOf(provider, row.model ?? null, usage);
          return row;
        }),
      );
      // Request logs are written on SQLite's raw handle, which a rolled-back request transaction
      // writes again (so that the gateway's batches survive it): a dry run stops here, and the
      // write is the last step, after which nothing can refuse the request.
      if (!request.dryRun) await deps.repo.insertBatch(rows);
      request.auditResourceId = rows.length === 1 ? rows[0]!.id : null;
      return reply.code(200).send();
    },
  );
}
