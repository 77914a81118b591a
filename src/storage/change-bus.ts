import { afterCommit } from './request-transaction.js';

/**
 * What changed, as far as caches care: `key` names one API key, the other topics clear a whole
 * cache. `all` clears everything (an instance that lost its connection may have missed changes).
 */
export type Change =
  | { topic: 'key'; id: string }
  | {
      topic: 'keys' | 'credentials' | 'configs' | 'guardrails' | 'limits' | 'settings' | 'deployments' | 'mcp' | 'all';
    };

export type ChangeHandler = (change: Change) => void;

/**
 * Tells every instance's caches about a change to the control plane. `publish` runs this
 * instance's handlers at once, and the other instances' once the request transaction in which
 * it was called commits (never, when it is undone), so that they reload the committed rows.
 */
export interface ChangeBus {
  publish(change: Change): void;
  /** Runs `handler` for every change, published here or received; returns its removal. */
  on(handler: ChangeHandler): () => void;
  /** The database session listening for the others' changes, if any (tests cut it to check recovery). */
  listenerPid(): number | null;
  close(): Promise<void>;
}

/** How changes reach the other instances: sends a message, and calls `receive` for every message (its own included). */
export interface ChangeTransport {
  send(message: string): Promise<void>;
  start(receive: (message: string) => void, onResume: () => void): Promise<void>;
  close(): Promise<void>;
  backendPid?(): number | null;
}

const TOPICS = new Set([
  'key',
  'keys',
  'credentials',
  'configs',
  'guardrails',
  'limits',
  'settings',
  'deployments',
  'mcp',
  'all',
]);

/** A message from the wire, or null when it is not one of ours. */
export function parseChange(message: string): Change | null {
  try {
    const value = JSON.parse(message) as { topic?: unknown; id?: unknown };
    if (typeof value.topic !== 'string' || !TOPICS.has(value.topic)) return null;
    if (value.topic === 'key') return typeof value.id === 'string' ? { topic: 'key', id: value.id } : null;
    return { topic: value.topic as Exclude<Change['topic'], 'key'> };
  } catch {
    return null;
  }
}

/**
 * The bus of an instance. Without a transport (SQLite: one box) changes stay in this process and
 * other processes on the same file see them when their cache entries expire.
 */
export function createChangeBus(
  options: { transport?: ChangeTransport; onSendError?: (error: unknown) => void } = {},
): ChangeBus & { start(): Promise<void> } {
  const handlers = new Set<ChangeHandler>();
  const dispatch = (change: Change) => {
    for (const handler of handlers) handler(change);
  };
  const { transport } = options;
  return {
    publish(change) {
      dispatch(change);
      if (!transport) return;
      const message = JSON.stringify(change);
      void afterCommit(() => transport.send(message).catch((error: unknown) => options.onSendError?.(error)));
    },
    on(handler) {
      handlers.add(handler);
      return () => void handlers.delete(handler);
    },
    async start() {
      await transport?.start(
        (message) => {
          // Our own messages come back too: clearing again after the commit drops whatever a
          // request of this instance loaded between the change and its commit.
          const change = parseChange(message);
          if (change) dispatch(change);
        },
        () => dispatch({ topic: 'all' }),
      );
    },
    listenerPid: () => transport?.backendPid?.() ?? null,
    close: async () => transport?.close(),
  };
}
