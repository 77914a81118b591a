import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { BOTH_KEY_TYPES } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { toLogObject } from './log-object.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import type { RequestLogWriter } from '../../telemetry/request-log-writer.js';
import type { LogVisibility } from '../settings/log-visibility.js';
import { idOrSlug } from '../shared/pagination.js';
import { resolveWorkspace } from '../shared/workspace-access.js';

const streamLogsQuery = z
  .object({
    workspace_id: idOrSlug.optional(),
    status_code: z.coerce.number().int().min(100).max(599).optional(),
    provider: z.string().max(128).optional(),
    model: z.string().max(256).optional(),
    in_flight: z
      .enum(['true', 'false'])
      .optional()
      .describe('also send `event: start` with each request as it begins (`object: "log.start"`, no status yet)'),
  })
  .strict();

/** Comment lines keep proxies and idle timers from closing a quiet stream. */
export const HEARTBEAT_MS = 15_000;
/** Bytes a follower may leave unread before records are dropped for it (it is too slow). */
const MAX_UNSENT_BYTES = 1024 * 1024;
/** API keys whose ownership a limited follower remembers. */
const MAX_KNOWN_KEYS = 10_000;

/**
 * For a caller limited to its own user's keys (data visibility off): whether a record's key is
 * that user's. The answer for a key not seen before comes from the database, off the writer's
 * path; then it is remembered.
 */
function ownKeysOnly(visibility: LogVisibility, organisationId: string, userId: string) {
  const known = new Map<string, boolean | Promise<boolean>>();
  return (apiKeyId: string, send: () => void): void => {
    const hit = known.get(apiKeyId);
    if (hit === true) return send();
    if (hit === false) return;
    if (known.size >= MAX_KNOWN_KEYS) known.clear();
    const check = hit ?? visibility.ownsKey(organisationId, userId, apiKeyId);
    known.set(apiKeyId, check);
    check.then(
      (owns) => {
        known.set(apiKeyId, owns);
        if (owns) send();
      },
      () => known.delete(apiKeyId),
    );
  };
}

/**
 * `GET /v1/logs/stream`: server-sent events, one `data:` line per gateway request as its record
 * is queued, for `svcgw logs tail`. Records come from this instance's writer, so a follower sees
 * the requests this instance serves; behind a load balancer, each instance has its own stream.
 * The writer never waits for a follower: a follower whose connection cannot keep up loses records.
 * Who sees what is as for `GET /v1/logs`, data visibility settings included.
 */
export function registerLogStreamRoute(
  app: ZodApp,
  deps: { workspaces: WorkspaceRepository; writer: RequestLogWriter; visibility?: LogVisibility; heartbeatMs?: number },
): void {
  const open = new Set<() => void>();
  // Open streams would hold the server's close open forever; end them first.
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });

  app.get(
    '/v1/logs/stream',
    {
      schema: {
        tags: ['Logs'],
        summary: 'Follow request logs as they are recorded (server-sent events)',
        description:
          'Answers `text/event-stream`: one `data:` line with a log record (as `GET /v1/logs` lists it) per gateway request, ' +
          'and a comment line every 15 s. With `in_flight=true`, also an `event: start` line as each request begins (its record follows with the same `id`; not sent with the `status_code` or `provider` filters, which a request in flight cannot match yet). It follows the requests of the instance it is connected to. Workspace keys see their own workspace only.',
        querystring: streamLogsQuery,
      },
      config: { auth: { scope: 'logs.list', keyTypes: BOTH_KEY_TYPES } },
    },
    async (request, reply) => {
      const principal = request.principal!;
      const q = request.query;
      const workspace = await resolveWorkspace(deps.workspaces, principal, q.workspace_id, { required: false });
      const workspaceId = workspace?.id ?? principal.workspaceId;
      const ownerId = deps.visibility ? await deps.visibility.ownDataOnly(principal) : null;
      const visible =
        ownerId === null
          ? (_apiKeyId: string, send: () => void) => send()
          : ownKeysOnly(deps.visibility!, principal.organisationId, ownerId);

      reply.hijack();
      const res: ServerResponse = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'close',
        'x-accel-buffering': 'no',
        'x-request-id': request.id,
      });
      res.write(': following request logs\n\n');

      let dropped = 0;
      const unsubscribe = deps.writer.onRecord((row) => {
        if (row.organisation_id !== principal.organisationId) return;
        if (workspaceId && row.workspace_id !== workspaceId) return;
        if (q.status_code !== undefined && row.status_code !== q.status_code) return;
        if (q.provider !== undefined && row.provider !== q.provider) return;
        if (q.model !== undefined && row.model !== q.model) return;
        visible(row.api_key_id, () => {
          if (res.writableEnded) return;
          if (res.writableLength > MAX_UNSENT_BYTES) {
            dropped++;
            return;
          }
          res.write(`data: ${JSON.stringify(toLogObject(row, false))}\n\n`);
        });
      });
      // A request in flight has no status yet: with a status filter only finished ones are sent.
      const stopStarts =
        q.in_flight === 'true' && q.status_code === undefined && q.provider === undefined
          ? deps.writer.onStart((start) => {
              if (start.organisation_id !== principal.organisationId) return;
              if (workspaceId && start.workspace_id !== workspaceId) return;
              if (q.model !== undefined && start.model !== q.model) return;
              visible(start.api_key_id, () => {
                if (res.writableEnded || res.writableLength > MAX_UNSENT_BYTES) return;
                res.write(`event: start\ndata: ${JSON.stringify({ object: 'log.start', ...start })}\n\n`);
              });
            })
          : () => undefined;
      const heartbeat = setInterval(
        () => res.write(dropped > 0 ? `: heartbeat, ${dropped} records dropped\n\n` : ': heartbeat\n\n'),
        deps.heartbeatMs ?? HEARTBEAT_MS,
      );
      heartbeat.unref();

      const end = () => {
        if (!open.delete(end)) return;
        unsubscribe();
        stopStarts();
        clearInterval(heartbeat);
        if (!res.writableEnded) res.end();
      };
      open.add(end);
      res.once('close', end);
    },
  );
}
