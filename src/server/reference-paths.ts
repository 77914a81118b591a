import type { FastifyInstance, RouteOptions } from 'fastify';

/**
 * Where the reference gateway keeps resources that the spec names differently: a route whose
 * path begins with `spec` also answers at the same path beginning with `reference`. First match
 * wins, so the members rule comes before the workspaces rule. docs/compatibility.md lists them.
 */
export const REFERENCE_PREFIXES: ReadonlyArray<{ spec: string; reference: string }> = [
  { spec: '/v1/workspaces/:workspaceId/members', reference: '/v1/admin/workspaces/:workspaceId/users' },
  { spec: '/v1/workspaces', reference: '/v1/admin/workspaces' },
  { spec: '/v1/invites', reference: '/v1/admin/users/invites' },
  { spec: '/v1/users', reference: '/v1/admin/users' },
];

/** The reference path of a route's path, or null when the reference keeps it where the spec does. */
export function referencePath(url: string): string | null {
  for (const { spec, reference } of REFERENCE_PREFIXES) {
    if (url === spec || url.startsWith(`${spec}/`)) return reference + url.slice(spec.length);
  }
  return null;
}

const isRoute = (options: unknown): options is RouteOptions =>
  typeof options === 'object' && options !== null && 'handler' in options;

/**
 * Registers, beside every route of the spec's paths, the same route at the reference path: same
 * handler, schemas, auth, audit and feature flags, so the two cannot answer differently. Scripts
 * and generated clients written for the reference gateway then work unchanged. Must be
 * registered before the routes; the auth hook sees the copies as routes of their own (the route
 * access table lists them).
 */
export function registerReferencePaths(app: FastifyInstance): void {
  app.addHook('onRoute', function (this: FastifyInstance, route) {
    // HEAD routes are made by fastify for each GET, the copy's included.
    if (route.method === 'HEAD' || !isRoute(route)) return;
    const alias = referencePath(route.url);
    if (alias === null) return;
    const prefix = route.prefix ?? '';
    if (!alias.startsWith(prefix)) return;
    const schema = route.schema as Record<string, unknown> | undefined;
    const sameAs = `The same operation as \`${String(route.method)} ${route.url}\`, at the reference gateway's path.`;
    // Everything the route declared, at the other path; fastify recomputes what it derives from the URL.
    const {
      url: _url,
      path: _path,
      routePath: _routePath,
      prefix: _prefix,
      ...declared
    } = route as RouteOptions & {
      path?: string;
      routePath?: string;
      prefix?: string;
    };
    this.route({
      ...declared,
      url: alias.slice(prefix.length),
      ...(schema
        ? {
            schema: {
              ...schema,
              description: typeof schema.description === 'string' ? `${schema.description}\n\n${sameAs}` : sameAs,
            },
          }
        : {}),
    });
  });
}
