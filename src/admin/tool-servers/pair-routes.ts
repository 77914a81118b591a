import type { z } from 'zod';
import type { Principal } from '../../auth/principal.js';
import type { RouteAudit, RouteAuth } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';

/** How a route reads in the API reference. */
export interface RouteDocs {
  tags: string[];
  summary: string;
  description?: string;
}

/** The row a change touched, which the audit record names. */
export interface ChangedRow {
  id: string;
  workspace_id: string | null;
}

type Schema = z.ZodType;

/** A setting of one integration or server (`/:id/<setting>`) that is read with GET and changed with PUT. */
export interface ReadAndChange<Q extends Schema, B extends Schema> {
  path: string;
  params: z.ZodType<{ id: string }>;
  read: RouteDocs & {
    auth: RouteAuth;
    querystring?: Q;
    response: Schema;
    run: (principal: Principal, id: string, query: z.output<Q>) => Promise<unknown>;
  };
  change: RouteDocs & {
    auth: RouteAuth;
    audit: RouteAudit;
    body: B;
    response: Schema;
    run: (principal: Principal, id: string, body: z.output<B>) => Promise<ChangedRow>;
    /** What a successful change answers. */
    answer: () => unknown;
    /** Whether the audit record names the row's workspace (workspace access is the organisation's). */
    auditWorkspace: boolean;
  };
}

const withDescription = (docs: RouteDocs) => ({
  tags: docs.tags,
  summary: docs.summary,
  ...(docs.description === undefined ? {} : { description: docs.description }),
});

/**
 * Registers the GET and the PUT of a setting that MCP and agent integrations and servers share
 * (workspace access, user access, enabled capabilities or skills): the texts, schemas and
 * services are theirs, the handling is one.
 */
export function registerReadAndChange<Q extends Schema, B extends Schema>(
  app: ZodApp,
  spec: ReadAndChange<Q, B>,
): void {
  const { read, change } = spec;
  app.get(
    spec.path,
    {
      schema: {
        ...withDescription(read),
        params: spec.params,
        ...(read.querystring === undefined ? {} : { querystring: read.querystring }),
        response: { 200: read.response },
      },
      config: { auth: read.auth },
    },
    async (request) => read.run(request.principal!, request.params.id, request.query as z.output<Q>),
  );

  app.put(
    spec.path,
    {
      schema: {
        ...withDescription(change),
        params: spec.params,
        body: change.body,
        response: { 200: change.response },
      },
      config: { auth: change.auth, audit: change.audit },
    },
    async (request) => {
      const row = await change.run(request.principal!, request.params.id, request.body as z.output<B>);
      request.auditResourceId = row.id;
      if (change.auditWorkspace) request.auditWorkspaceId = row.workspace_id;
      return change.answer();
    },
  );
}
