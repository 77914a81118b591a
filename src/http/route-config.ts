import type { KeyKind, Principal } from '../auth/principal.js';
import type { Feature } from '../features/flags.js';
import type { OrgRole, WorkspaceRole } from '../storage/schema.js';

/**
 * Roles a route is restricted to, enforced by the auth hook before the handler runs: organisation
 * roles of the key's user, or its effective role in the key's workspace (organisation owners and
 * admins count as workspace admins). Declared only where every call needs the role; rules that
 * depend on the resource (a member revoking their own key) stay in the service.
 */
export type RouteRoles = readonly OrgRole[] | { workspace: readonly WorkspaceRole[] };

/**
 * What every route declares about who may call it. A route without `auth` fails start-up,
 * so that no route can be added without an authorization decision.
 */
export type RouteAuth =
  | { public: true }
  /** The SCIM protocol routes: an identity provider's SCIM token (`Authorization: Bearer`), nothing else. */
  | { scim: true }
  | {
      /** The scope the key must hold; per key kind where admin and workspace keys differ. */
      scope: string | null | Readonly<Record<KeyKind, string>>;
      keyTypes: readonly KeyKind[];
      roles?: RouteRoles;
    };

export interface RouteAudit {
  resourceType: string;
  action: string;
  /** Body fields that hold secrets under ordinary names (such as `key`); redacted in the record. */
  secretFields?: readonly string[];
  /**
   * What of the body the record keeps, for bodies that are data rather than settings (request
   * logs carry prompts, which the audit log must not hold); the whole body, redacted, by default.
   */
  recordBody?: (body: unknown) => unknown;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
    audit?: RouteAudit;
    /** Feature flags the route belongs to; when one is OFF the route answers FEATURE_DISABLED. */
    feature?: Feature | readonly Feature[];
    /**
     * The route's features with the implied `api_access` (see RouteAccess), worked out by the
     * auth plugin when the route registers so that requests do not; routes do not set it.
     */
    accessFeatures?: readonly Feature[];
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

/** Organisation owners and admins. */
export const ORG_ADMINS = ['owner', 'admin'] as const satisfies readonly OrgRole[];
/** Workspace admins and managers (organisation owners and admins included). */
export const WORKSPACE_MANAGERS = { workspace: ['admin', 'manager'] } as const satisfies RouteRoles;

/** Route → scope → key types → roles → features, collected as routes register; source of the docs table. */
export interface RouteAccess {
  method: string;
  url: string;
  auth: RouteAuth;
  /** Declared features plus the implied `api_access` of control-plane routes. */
  features: readonly Feature[];
}
