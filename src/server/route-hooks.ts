import type { RouteOptions } from 'fastify';

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
