import type { FastifyRequest, RouteOptions } from 'fastify';
import type { Db } from '../storage/database.js';
import {
  abandon,
  beginRequestTransaction,
  runInRequestTransaction,
  type RequestTransaction,
} from '../storage/request-transaction.js';

type Phase = 'preHandler' | 'onResponse';
type HookOf<P extends Phase> = Exclude<NonNullable<RouteOptions[P]>, unknown[]>;

/**
 * Adds a hook to one route (from an `onRoute` hook), after those it declares. For work that
 * applies to a few routes only (audited mutations): a global hook would run, and cost, on every
 * gateway request too. The route's hooks are copied, never changed in place: a route copied
 * before (reference-paths.ts) shares them.
 */
export function addRouteHook<P extends Phase>(route: RouteOptions, phase: P, hook: HookOf<P>): void {
  const declared = route[phase] as HookOf<P> | HookOf<P>[] | undefined;
  const hooks = declared === undefined ? [] : Array.isArray(declared) ? declared : [declared];
  route[phase] = [...hooks, hook] as RouteOptions[P];
}

/**
 * Runs one route's handler inside a request transaction (storage/request-transaction.ts) when
 * `wanted` says so, kept in `transactions` for the caller's onSend to commit or undo; a response
 * that never reached onSend (the connection broke first) leaves nothing half done. Callback-style,
 * so that the handler runs inside the transaction's async context. Audit and dry runs both use it.
 */
export function addTransactionHooks(
  route: RouteOptions,
  deps: {
    db: Db;
    transactions: WeakMap<FastifyRequest, RequestTransaction>;
    wanted: (request: FastifyRequest) => boolean;
    onAbandonFailed?: (request: FastifyRequest, error: unknown) => void;
  },
): void {
  const { transactions } = deps;
  addRouteHook(route, 'preHandler', (request, _reply, done) => {
    if (!deps.wanted(request)) return done();
    beginRequestTransaction(deps.db).then(
      (tx) => {
        transactions.set(request, tx);
        runInRequestTransaction(tx, () => done());
      },
      (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
    );
  });
  addRouteHook(route, 'onResponse', (request, _reply, done) => {
    const tx = transactions.get(request);
    if (!tx) return done();
    transactions.delete(request);
    const undone = deps.onAbandonFailed
      ? abandon(tx).catch((error: unknown) => deps.onAbandonFailed!(request, error))
      : abandon(tx);
    undone.then(() => done(), done);
  });
}
