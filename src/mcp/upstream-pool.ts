import type { Clock } from '../lib/clock.js';
import type { Logger } from '../telemetry/logger.js';
import type { McpEndpoint } from './types.js';
import { connectUpstream, sessionLost, upstreamError, type UpstreamSession } from './upstream-session.js';

interface Entry {
  integrationId: string;
  version: string;
  session: Promise<UpstreamSession>;
  /** When a call last used it (the clock's milliseconds). */
  usedAt: number;
}

/** A pooled connection nobody used for this long is closed (it is made again when needed). */
const IDLE_MS = 10 * 60_000;

/**
 * Upstream connections, one per integration, shared by every client call through every MCP
 * server made from it: the handshake happens once, an SSE server keeps one event stream.
 * A connection made with settings since changed is replaced; one whose transport closed is
 * made again on the next call; all are closed on shutdown.
 */
export interface McpUpstreams {
  /** The pooled session of the endpoint, connecting first if there is none. */
  session(endpoint: McpEndpoint): Promise<UpstreamSession>;
  /**
   * Runs `work` on the pooled session; when the session turns out to be gone (expired on the
   * server, the stream closed), once more on a new one.
   */
  use<T>(endpoint: McpEndpoint, work: (session: UpstreamSession) => Promise<T>): Promise<T>;
  /** Closes the integration's pooled sessions, its users' included (it was changed or archived). */
  drop(integrationId: string): void;
  /** Closes connections idle for ten minutes (runs every minute; tests call it). */
  sweep(): void;
  close(): Promise<void>;
  readonly size: number;
}

export function createMcpUpstreams(deps: {
  clock: Clock;
  logger: Logger;
  timeoutMs: number;
  /** The server said its tools, prompts or resources changed. */
  onListChanged?: (integrationId: string) => void;
}): McpUpstreams {
  const entries = new Map<string, Entry>();
  let closing = false;
  const sweeper = setInterval(() => sweep(), 60_000);
  sweeper.unref();

  function sweep(): void {
    const idleSince = deps.clock.now() - IDLE_MS;
    for (const [key, entry] of entries) if (entry.usedAt < idleSince) forget(key, entry);
  }

  const keyOf = (endpoint: McpEndpoint) => endpoint.poolKey ?? endpoint.integrationId;

  function forget(key: string, entry: Entry): void {
    if (entries.get(key) !== entry) return;
    entries.delete(key);
    void entry.session.then(
      (session) => session.close(),
      () => {},
    );
  }

  function session(endpoint: McpEndpoint): Promise<UpstreamSession> {
    if (closing) return Promise.reject(new Error('svcgw is shutting down'));
    const key = keyOf(endpoint);
    const current = entries.get(key);
    if (current && current.version === endpoint.version) {
      current.usedAt = deps.clock.now();
      return current.session;
    }
    if (current) forget(key, current);
    const entry: Entry = {
      integrationId: endpoint.integrationId,
      version: endpoint.version,
      session: Promise.resolve(null as never),
      usedAt: deps.clock.now(),
    };
    entry.session = connectUpstream(endpoint, {
      clock: deps.clock,
      timeoutMs: deps.timeoutMs,
      onListChanged: () => deps.onListChanged?.(endpoint.integrationId),
      onClose: () => {
        if (entries.get(key) === entry) entries.delete(key);
      },
    });
    // A failed connection is not kept: the next call tries again.
    entry.session.catch(() => {
      if (entries.get(key) === entry) entries.delete(key);
    });
    entries.set(key, entry);
    return entry.session;
  }

  async function live(endpoint: McpEndpoint): Promise<UpstreamSession> {
    const found = await session(endpoint);
    if (found.open) return found;
    const entry = entries.get(keyOf(endpoint));
    if (entry) forget(keyOf(endpoint), entry);
    return session(endpoint);
  }

  return {
    session: live,
    async use(endpoint, work) {
      const first = await live(endpoint);
      try {
        return await work(first);
      } catch (error) {
        if (!sessionLost(error)) throw error;
        deps.logger.info({ integration_id: endpoint.integrationId }, 'MCP upstream session lost; connecting again');
        const entry = entries.get(keyOf(endpoint));
        if (entry) forget(keyOf(endpoint), entry);
        let second: UpstreamSession;
        try {
          second = await live(endpoint);
        } catch (retryError) {
          throw upstreamError(endpoint, retryError);
        }
        return work(second);
      }
    },
    sweep,
    drop(integrationId) {
      for (const [key, entry] of entries) if (entry.integrationId === integrationId) forget(key, entry);
    },
    async close() {
      closing = true;
      clearInterval(sweeper);
      const all = [...entries.values()];
      entries.clear();
      await Promise.all(
        all.map((entry) =>
          entry.session.then(
            (s) => s.close(),
            () => {},
          ),
        ),
      );
    },
    get size() {
      return entries.size;
    },
  };
}
