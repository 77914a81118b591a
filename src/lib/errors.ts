/**
 * One error type for both planes. Every failure a client can see is an AppError with a
 * stable `code`; the HTTP status and the OpenAI-style `type` are derived from the code in
 * one place so that routes never pick statuses by hand.
 */
export const ERROR_CODES = {
  INVALID_JSON: { status: 400, type: 'invalid_request_error', summary: 'The request body is not valid JSON.' },
  INVALID_REQUEST: {
    status: 400,
    type: 'invalid_request_error',
    summary: 'A parameter is missing, of the wrong type or out of bounds; `param` names it.',
  },
  UNKNOWN_SCOPE: {
    status: 400,
    type: 'invalid_request_error',
    summary: 'An API key scope that does not exist (see GET /v1/api-keys/scopes).',
  },
  MISSING_PROVIDER: {
    status: 400,
    type: 'invalid_request_error',
    summary: 'A gateway request names no provider: send x-service-provider (or x-service-virtual-key).',
  },
  UNKNOWN_PROVIDER: {
    status: 400,
    type: 'invalid_request_error',
    summary: 'x-service-provider names a provider the registry does not know.',
  },
  UNSUPPORTED_ENDPOINT: {
    status: 400,
    type: 'invalid_request_error',
    summary: 'The provider does not offer this endpoint family.',
  },
  PROVIDER_CONFIG: {
    status: 400,
    type: 'invalid_request_error',
    summary: 'The provider cannot be reached with the settings given (custom host, Azure resource, …).',
  },
  UNAUTHENTICATED: { status: 401, type: 'authentication_error', summary: 'The x-service-api-key header is missing.' },
  INVALID_API_KEY: {
    status: 401,
    type: 'authentication_error',
    summary: 'The API key is unknown, malformed, expired or revoked.',
  },
  INVALID_JWT: {
    status: 401,
    type: 'authentication_error',
    summary:
      'The JWT was refused: the message says why (unknown issuer or kid, bad signature, not yet valid, wrong audience, a claim missing, an unknown workspace, …); see docs/jwt.md.',
  },
  JWT_EXPIRED: {
    status: 401,
    type: 'authentication_error',
    summary: 'The JWT is past its exp (beyond the clock tolerance): get a new token from the identity provider.',
  },
  JWKS_UNAVAILABLE: {
    status: 503,
    type: 'api_error',
    summary:
      "The JWT could not be checked because the organisation's JWKS could not be fetched (and no earlier copy was at hand); retry later.",
  },
  INVALID_SCIM_TOKEN: {
    status: 401,
    type: 'authentication_error',
    summary:
      'A SCIM route was called without a valid SCIM token (Authorization: Bearer <token>): missing, unknown, revoked or expired. API keys are not accepted there.',
  },
  MISSING_SCOPE: { status: 403, type: 'permission_error', summary: 'The API key lacks the scope the route needs.' },
  KEY_TYPE_NOT_ALLOWED: {
    status: 403,
    type: 'permission_error',
    summary: 'The route is not open to this type of key (admin or workspace).',
  },
  ROLE_NOT_ALLOWED: {
    status: 403,
    type: 'permission_error',
    summary: "The key's user does not have the role the operation needs.",
  },
  WORKSPACE_FORBIDDEN: {
    status: 403,
    type: 'permission_error',
    summary: 'The resource belongs to a workspace this key cannot reach.',
  },
  INTEGRATION_NOT_ENABLED: {
    status: 403,
    type: 'permission_error',
    summary:
      'The integration is not enabled for this workspace (`/v1/integrations/{slug}/workspaces`), so no provider there may use it.',
  },
  MODEL_NOT_ALLOWED: {
    status: 403,
    type: 'permission_error',
    summary:
      "The model is not allowed here: by the provider's integration model list, the API key's or the workspace's defaults.allowed_models (`param` is model). Refused before any provider call.",
  },
  DEPLOYMENT_FORBIDDEN: {
    status: 403,
    type: 'permission_error',
    summary:
      "The gateway instance serves a deployment that does not take this request's workspace (its allowed_workspaces); the message names the deployment. Send the request to an instance of a deployment that allows the workspace.",
  },
  MCP_ACCESS_DENIED: {
    status: 403,
    type: 'permission_error',
    summary:
      "The MCP server may not be used by this caller: its integration is not shared with the server's workspace, or the key's user has no access (user access of the server).",
  },
  MCP_AUTHORIZATION_REQUIRED: {
    status: 403,
    type: 'permission_error',
    summary:
      "The MCP server's integration authorizes each user (oauth_auto), and the caller's user has not authorized svcgw there yet (or the authorization ran out and could not be renewed), or the key belongs to no user. The message names the URL that starts the authorization (GET /v1/mcp/{server}/oauth/authorize).",
  },
  INVALID_DOWNLOAD_LINK: {
    status: 403,
    type: 'permission_error',
    summary:
      'A signed export download link (the signed_url of GET /v1/logs/exports/{exportId}/download) was altered, has expired (after 15 minutes) or belongs to an earlier run of the export: ask for a new one.',
  },
  NOT_FOUND: {
    status: 404,
    type: 'not_found_error',
    summary: 'The resource does not exist (or belongs to another organisation).',
  },
  ROUTE_NOT_FOUND: { status: 404, type: 'not_found_error', summary: 'No route matches the method and path.' },
  METHOD_NOT_ALLOWED: {
    status: 405,
    type: 'invalid_request_error',
    summary:
      'The path exists but not for this method (an MCP endpoint takes POST only: svcgw serves MCP without sessions, see docs/mcp.md); `allow` names the methods.',
  },
  CONFLICT: {
    status: 409,
    type: 'invalid_request_error',
    summary: 'A resource with the same unique field (such as a slug) already exists.',
  },
  PRECONDITION_FAILED: {
    status: 412,
    type: 'invalid_request_error',
    summary: 'If-Match names a version (ETag) of the resource that is no longer current; read it again.',
  },
  LAST_ADMIN_KEY: {
    status: 409,
    type: 'invalid_request_error',
    summary:
      'The change would leave the organisation with no active admin key of an owner or admin; create another admin key first.',
  },
  USAGE_LIMIT_EXCEEDED: {
    status: 402,
    type: 'insufficient_quota',
    summary:
      'A budget (usage limit) that covers the request is spent; raising its credit limit or its periodic reset lets requests through again.',
  },
  HOOKS_DENIED: {
    status: 446,
    type: 'hooks_failed',
    summary:
      'A guardrail with `deny: true` failed; the body carries `hook_results` with every check. Input guardrails deny before any provider call.',
  },
  GUARDRAIL_UNAVAILABLE: {
    status: 400,
    type: 'invalid_request_error',
    summary:
      'A guardrail the config or the workspace defaults name is gone or belongs to another workspace; the request is refused rather than sent unguarded. `param` says where it is named.',
  },
  GUARDRAILS_UNSUPPORTED_ROUTE: {
    status: 400,
    type: 'invalid_request_error',
    summary:
      'Guardrails apply to this request, but its route passes bodies through uninspected (multipart, native pass-through); it is refused rather than sent unguarded.',
  },
  CREDENTIAL_EXPIRED: {
    status: 403,
    type: 'permission_error',
    summary:
      'The provider or virtual key the request is sent with has passed its expires_at; a later expires_at (PUT) brings it back.',
  },
  RATE_LIMITED: {
    status: 429,
    type: 'rate_limit_error',
    summary:
      'A rate limit that covers the request is reached; `retry-after` and `x-ratelimit-*` say when it resets. The message names the policy.',
  },
  NOT_ACCEPTABLE: {
    status: 406,
    type: 'invalid_request_error',
    summary:
      "The request's Accept header rules out every answer the route can give (an MCP endpoint answers JSON or an event stream: accept both).",
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    type: 'invalid_request_error',
    summary: 'The request body is larger than the max_body_bytes setting.',
  },
  REQUEST_TIMEOUT: {
    status: 408,
    type: 'invalid_request_error',
    summary: "The client did not send the whole request in time (Node's requestTimeout).",
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    type: 'invalid_request_error',
    summary:
      "The request line and headers together are larger than the server reads (Node's 16 KiB default): send long filters in a body, or fewer of them.",
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    type: 'invalid_request_error',
    summary: 'The content type is not accepted by this route (admin routes take application/json).',
  },
  UPSTREAM_ERROR: {
    status: 502,
    type: 'api_error',
    summary:
      "The provider answered with an error (the response has the provider's status and message), or with a redirect or a successful body the gateway could not read (502).",
  },
  UPSTREAM_UNREACHABLE: {
    status: 502,
    type: 'api_error',
    summary:
      'The provider could not be reached (connection refused or reset, DNS failure), or its answer was not valid HTTP/1.1.',
  },
  UPSTREAM_TIMEOUT: {
    status: 504,
    type: 'api_error',
    summary: 'The provider did not answer in time (upstream_*_timeout_ms settings).',
  },
  LIMITS_UNAVAILABLE: {
    status: 503,
    type: 'api_error',
    summary: 'The counter store (Redis) is unreachable and limits_on_store_failure is closed.',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    type: 'api_error',
    summary: 'The server is shutting down or a dependency is unavailable.',
  },
  INTERNAL_ERROR: {
    status: 500,
    type: 'api_error',
    summary: 'An unexpected failure; details are in the server log under the request id.',
  },
  INVALID_INVITE_TOKEN: {
    status: 400,
    type: 'invalid_request_error',
    summary: 'The invite token is malformed or unknown (a resend replaces the previous token).',
  },
  INVITE_EXPIRED: {
    status: 410,
    type: 'invalid_request_error',
    summary: 'The invite is past its expires_at; an owner, admin or manager can resend it.',
  },
  INVITE_REVOKED: { status: 410, type: 'invalid_request_error', summary: 'The invite was revoked.' },
  INVITE_ALREADY_ACCEPTED: {
    status: 410,
    type: 'invalid_request_error',
    summary: 'The invite was already accepted; its token works once.',
  },
  WORKSPACE_ARCHIVED: {
    status: 401,
    type: 'authentication_error',
    summary: 'The API key belongs to an archived workspace; it works again once the workspace is unarchived.',
  },
  FEATURE_DISABLED: {
    status: 403,
    type: 'permission_error',
    summary:
      'The route belongs to a feature this deployment turned off; the message names the flag and its variable (such as AUDIT_LOGS_ENABLED=OFF).',
  },
  USER_KEY_LIMIT_REACHED: {
    status: 409,
    type: 'invalid_request_error',
    summary:
      'The user already holds as many active API keys in the workspace as the security setting maxUserApiKeysPerWorkspace allows.',
  },
  CONFIG_NOT_FOUND: {
    status: 400,
    type: 'invalid_request_error',
    summary: "x-service-config (or the API key's default config) names no active config this key can use.",
  },
  CONFIG_OVERRIDE_FORBIDDEN: {
    status: 403,
    type: 'permission_error',
    summary:
      'The API key has a default config with allow_config_override false: its requests cannot name another config.',
  },
  MCP_TOOL_ERROR: {
    status: 200,
    type: 'api_error',
    summary:
      'Seen in request logs only: an MCP tool answered with `isError: true`; the client got the result as the server gave it (status 200).',
  },
  CLIENT_CLOSED_REQUEST: {
    status: 499,
    type: 'api_error',
    summary: 'The client closed the connection before the answer was complete (seen in logs only).',
  },
  INVALID_SESSION: {
    status: 401,
    type: 'authentication_error',
    summary:
      'The session token is malformed or unknown, the session was ended (logged out, revoked by an admin, its user removed); sign in again (svcgw login --sso).',
  },
  SESSION_EXPIRED: {
    status: 401,
    type: 'authentication_error',
    summary:
      "The session is past its expiry or older than the organisation's session_settings.max_session_ttl; re-authenticate (svcgw login --sso).",
  },
  SSO_NOT_CONFIGURED: {
    status: 400,
    type: 'invalid_request_error',
    summary: 'The organisation has no identity provider of this kind (OIDC or SAML); see PUT /v1/settings/sso.',
  },
  SSO_LOGIN_FAILED: {
    status: 401,
    type: 'authentication_error',
    summary:
      "The identity provider's answer was refused: an unknown, replayed or expired login, an error from the provider, an ID token or SAML assertion that does not verify (unsigned, tampered, wrong audience, expired); the message says which.",
  },
  SSO_PROVIDER_UNAVAILABLE: {
    status: 502,
    type: 'api_error',
    summary: 'The identity provider could not be reached, or answered its discovery or token request with an error.',
  },
  SSO_USER_NOT_PROVISIONED: {
    status: 403,
    type: 'permission_error',
    summary:
      'Single sign-on found no user and no pending invite for the address, and the organisation does not create users on first sign-in (or the address is not verified).',
  },
  INVALID_LOGIN_CODE: {
    status: 400,
    type: 'invalid_request_error',
    summary:
      'The one-time login code is malformed, unknown, already used or expired, or the code_verifier does not match the code_challenge of the login.',
  },
  SECRET_REFERENCE_IN_USE: {
    status: 400,
    type: 'invalid_request_error',
    summary:
      'The secret reference is in use by integrations or virtual keys (or an API key rotation policy), which the message names; remove their mappings first. Also refused: narrowing allowed_workspaces below a workspace that uses it.',
  },
  SECRET_REFERENCE_FORBIDDEN: {
    status: 403,
    type: 'permission_error',
    summary:
      "The workspace is not in the secret reference's allowed_workspaces: a credential mapped to it cannot be saved or used there.",
  },
  SECRET_MANAGER_ERROR: {
    status: 502,
    type: 'api_error',
    summary:
      'A secret reference could not be read or written: its secret manager was unreachable, refused the sign-in, or has no such secret or key. The message names the reference and what the manager said, never a secret.',
  },
  AGENT_ACCESS_DENIED: {
    status: 403,
    type: 'permission_error',
    summary:
      "The agent server is closed to this caller: the key's user is not allowed by the server's user access, or the server's agent integration is not enabled for its workspace (docs/agents.md).",
  },
  AGENT_SKILL_DISABLED: {
    status: 403,
    type: 'permission_error',
    summary:
      'The message names (metadata skill_id) a skill that is disabled on the agent server or its integration; disabled skills are also left out of the card the gateway serves.',
  },
  AGENT_UNAVAILABLE: {
    status: 502,
    type: 'api_error',
    summary:
      "The agent server's agent cannot be used: its card could not be read or names no JSON-RPC endpoint on the integration's origin (sync the integration or set its rpc_url), or it refused the integration's credentials.",
  },
  AB01_INVALID_CONFIG: {
    status: 400,
    type: 'invalid_request_error',
    summary:
      'A gateway config object is invalid; `param` is the JSON path of the first problem (such as config.targets[1].weight) and the message lists every problem with its path.',
  },
} as const satisfies Record<string, { status: number; type: string; summary: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function codeToStatus(code: ErrorCode): number {
  return ERROR_CODES[code].status;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly param: string | null;
  override readonly cause?: unknown;

  constructor(code: ErrorCode, message: string, options: { param?: string | null; cause?: unknown } = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.param = options.param ?? null;
    this.cause = options.cause;
  }

  get status(): number {
    return codeToStatus(this.code);
  }
}

/** The body every error response carries, on both planes (OpenAI clients surface `message`). */
export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

export function errorBody(code: ErrorCode, message: string, param: string | null = null): ErrorBody {
  return { error: { message, type: ERROR_CODES[code].type, param, code } };
}

export const notFound = (what: string, param: string | null = null) =>
  new AppError('NOT_FOUND', `${what} not found`, { param });

export const invalid = (param: string, message: string) => new AppError('INVALID_REQUEST', message, { param });
