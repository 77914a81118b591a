import type { KeyKind, Principal } from '../auth/principal.js';

/**
 * What every route declares about who may call it. A route without `auth` fails start-up,
 * so that no route can be added without an authorization decision.
 */
export type RouteAuth =
  | { public: true }
  | {
      /** The scope the key must hold; per key kind where admin and workspace keys differ. */
      scope: string | null | Readonly<Record<KeyKind, string>>;
      keyTypes: readonly KeyKind[];
    };

export interface RouteAudit {
  resourceType: string;
  action: string;
  /** Body fields that hold secrets under ordinary names (such as `key`); redacted in the record. */
  secretFields?: readonly string[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
    audit?: RouteAudit;
  }
  interface FastifyRequest {
    principal: Principal | null;
    /** Set by a handler so that the audit record names the resource it touched. */
    auditResourceId: string | null;
    auditWorkspaceId: string | null;
  }
}

export const BOTH_KEY_TYPES = ['admin', 'workspace'] as const satisfies readonly KeyKind[];
export const ADMIN_ONLY = ['admin'] as const satisfies readonly KeyKind[];

/** Route → scope → key types, collected as routes register; source of the docs table. */
export interface RouteAccess {
  method: string;
  url: string;
  auth: RouteAuth;
}
