import { performance } from 'node:perf_hooks';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { Db } from '../storage/database.js';
import { runExclusive } from '../storage/job-lock.js';
import type { McpIntegrationRepository, McpIntegrationRow } from '../storage/repositories/mcp-integrations.js';
import type { Logger } from '../telemetry/logger.js';
import { readCatalogue } from './catalogue.js';
import type { McpEndpoint } from './types.js';
import { connectUpstream, upstreamError } from './upstream-session.js';

/** What one sync (or a connection test) found. */
export interface SyncOutcome {
  ok: boolean;
  /** HTTP status of the server's last answer: 200 when it worked, the refusal's status, null when unreachable. */
  statusCode: number | null;
  serverName: string | null;
  error: string | null;
  elapsedMs: number;
}

export interface McpSync {
  /** Connects afresh, reads the server's metadata and every capability, and stores them. */
  sync(integrationId: string): Promise<SyncOutcome>;
  /** Syncs in the background (coalescing requests that arrive while one runs). */
  request(integrationId: string): void;
  /** One pass of the periodic sync: every active integration not synced within the interval. */
  runOnce(): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

/**
 * Keeps each integration's capability catalogue and metadata in step with its server: after
 * it is created or its connection settings change, when a pooled connection hears that a list
 * changed, on a connection test, and every `intervalMs` (0: never). On PostgreSQL the periodic
 * pass runs on one instance at a time.
 */
export function createMcpSync(deps: {
  db: Db;
  integrations: McpIntegrationRepository;
  endpointOf: (row: McpIntegrationRow) => Promise<McpEndpoint>;
  clock: Clock;
  logger: Logger;
  timeoutMs: number;
  intervalMs: number;
  /** Called after a sync stored something: caches of the catalogue are stale. */
  onChange: () => void;
}): McpSync {
  const running = new Map<string, Promise<SyncOutcome>>();
  const again = new Set<string>();
  let timer: NodeJS.Timeout | null = null;
  let pass: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const stamp = () => new Date(deps.clock.now()).toISOString();

  async function syncNow(integrationId: string): Promise<SyncOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const row = await deps.integrations.findByIdAnywhere(integrationId);
    if (!row || row.status !== 'active')
      return { ok: false, statusCode: null, serverName: null, error: 'The integration is archived.', elapsedMs: 0 };
    const endpoint = await deps.endpointOf(row);
    let session: Awaited<ReturnType<typeof connectUpstream>> | null = null;
    try {
      session = await connectUpstream(endpoint, { clock: deps.clock, timeoutMs: deps.timeoutMs });
      const { metadata } = session;
      const items = await readCatalogue(session.client, metadata.capabilities, deps.timeoutMs);
      await deps.integrations.applySync(
        integrationId,
        items,
        {
          server_info: JSON.stringify(metadata.serverInfo),
          protocol_version: metadata.protocolVersion,
          capability_flags: JSON.stringify(metadata.capabilities),
          instructions: metadata.instructions,
          sync_status: 'synced',
          last_synced_at: stamp(),
          sync_error: null,
        },
        stamp(),
        newId,
      );
      deps.onChange();
      return { ok: true, statusCode: 200, serverName: metadata.serverInfo.name, error: null, elapsedMs: elapsed() };
    } catch (error) {
      const failure = upstreamError(endpoint, error);
      deps.logger.warn({ integration_id: integrationId, err: failure.message }, 'MCP capability sync failed');
      await deps.integrations.update(integrationId, {
        sync_status: 'error',
        last_synced_at: stamp(),
        sync_error: failure.message.slice(0, 2000),
      });
      deps.onChange();
      return { ok: false, statusCode: failure.status, serverName: null, error: failure.message, elapsedMs: elapsed() };
    } finally {
      await session?.close();
    }
  }

  function sync(integrationId: string): Promise<SyncOutcome> {
    const current = running.get(integrationId);
    if (current) return current;
    const next = syncNow(integrationId).finally(() => {
      running.delete(integrationId);
      if (again.delete(integrationId) && !stopped) request(integrationId);
    });
    running.set(integrationId, next);
    return next;
  }

  function request(integrationId: string): void {
    if (stopped) return;
    if (running.has(integrationId)) {
      again.add(integrationId);
      return;
    }
    sync(integrationId).catch((error: unknown) =>
      deps.logger.error({ err: error, integration_id: integrationId }, 'MCP capability sync could not run'),
    );
  }

  async function runOnce(): Promise<number> {
    const result = await runExclusive(deps.db, 'mcp-capability-sync', async () => {
      const due = deps.clock.now() - deps.intervalMs;
      let count = 0;
      for (const row of await deps.integrations.listActive()) {
        if (stopped) break;
        if (row.last_synced_at !== null && Date.parse(row.last_synced_at) > due) continue;
        await sync(row.id);
        count++;
      }
      return count;
    });
    return result.ran ? result.value : 0;
  }

  return {
    sync,
    request,
    runOnce,
    start() {
      if (deps.intervalMs <= 0 || timer) return;
      timer = setInterval(
        () => {
          pass = runOnce().catch((error: unknown) => deps.logger.error({ err: error }, 'MCP periodic sync failed'));
        },
        Math.min(deps.intervalMs, 60_000),
      );
      timer.unref();
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = null;
      await pass;
      await Promise.allSettled([...running.values()]);
    },
  };
}
