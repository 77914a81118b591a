import type { Principal } from '../auth/principal.js';
import { AppError } from '../lib/errors.js';
import { boundRequest, type EstimateBound } from '../limits/estimate.js';
import type { MaybePromise } from '../lib/maybe-promise.js';
import type { ModelPrice } from '../pricing/pricing-service.js';
import { mergeAdmission, type Admission, type LimitsService } from '../limits/limits-service.js';
import type { PricingService } from '../pricing/pricing-service.js';
import { callTarget, discardAnswer, type CallDeps, type ClientLink, type UpstreamAnswer } from './call-target.js';
import type { GatewayReply, GatewayRequest, GatewayRoute } from './exchange.js';
import type { GatewayHeaders } from './gateway-headers.js';
import type { RequestGuard } from './guardrails/request-guard.js';
import { assertModelAllowed } from './model-access.js';
import type { ModelRoute } from './model-route.js';
import { modelRouteLeaf } from './model-route.js';
import { bodyKindOf } from './model-sniffer.js';
import type { RequestLogDraft } from './request-log-draft.js';
import { resolveLeafTarget, type CredentialLookup, type ResolvedTarget } from './resolve-target.js';
import type { GatewayConfig } from './config/schema.js';
import {
  HEADERS_LEAF,
  route as routeRequest,
  type AttemptOutcome,
  type Leaf,
  type LeafSettings,
  type RouteResult,
} from './routing/router.js';
import { retryWithFreshSecrets } from './secret-refresh.js';

export interface AttemptDeps {
  call: CallDeps;
  credentials: CredentialLookup;
  limits: LimitsService;
  pricing: PricingService;
  sleep: (ms: number) => Promise<void>;
}

/** One request as its attempts see it: what every target is tried with. */
export interface AttemptScope {
  route: GatewayRoute;
  /** The request as the client sent it. */
  request: GatewayRequest;
  /** The request as the providers get it (a guardrail may have rewritten its body). */
  sent: GatewayRequest;
  json: Record<string, unknown> | null;
  /** The path after /v1, with its query. */
  path: string;
  headers: GatewayHeaders;
  principal: Principal;
  workspaceId: string;
  facts: Awaited<ReturnType<LimitsService['facts']>>;
  admission: Admission;
  /** `model: "@slug/model"`: the stored provider the model name chose. */
  modelRoute: ModelRoute | null;
  alias: string | null;
  guard: RequestGuard | null;
  link: ClientLink;
  draft: RequestLogDraft;
}

type Attempted = AttemptOutcome<UpstreamAnswer> & { provider: string | null };

/**
 * Tries the request's targets: across a config's tree (retries, fallbacks, load balancing,
 * conditions) when there is one, else once at the target the model (`@slug/model`) or the
 * headers name. Which target served and how many tries it took go to the log and the headers.
 */
export async function attemptTargets(
  deps: AttemptDeps,
  scope: AttemptScope,
  config: GatewayConfig | null,
  metadata: Record<string, string> | null,
  reply: GatewayReply,
): Promise<{ outcome: AttemptOutcome<UpstreamAnswer>; servedLeaf: string | null }> {
  if (!config) {
    const outcome = await attemptTarget(
      deps,
      scope,
      scope.modelRoute ? modelRouteLeaf(scope.modelRoute) : HEADERS_LEAF,
    );
    // The provider that failed is logged, as a config's last attempt's is.
    if (!outcome.ok && outcome.provider) scope.draft.provider = outcome.provider;
    return { outcome, servedLeaf: null };
  }
  // A streamed request body can be sent only once: raw routes get one attempt at one target.
  const routed = await routeRequest(
    scope.route.body === 'raw' ? withoutRetries(config) : config,
    { metadata, params: scope.json },
    {
      attempt: (leaf) => attemptTarget(deps, scope, leaf),
      discard: discardAnswer,
      sleep: deps.sleep,
      random: Math.random,
      cancelled: () => scope.link.gone,
    },
  );
  recordRouting(reply, scope.draft, routed);
  return { outcome: routed.outcome, servedLeaf: routed.leaf.label };
}

/**
 * One try at one leaf: its target and credential, the model checks, the leaf's guardrails, the
 * budgets (reserved on the first try) and the credential's own limits, then the call (once more
 * with fresh secrets when a secret manager's key was refused).
 */
async function attemptTarget(deps: AttemptDeps, scope: AttemptScope, leaf: Leaf): Promise<Attempted> {
  const { principal, json, alias } = scope;
  const resolved = resolveLeafTarget(
    leaf.node,
    scope.headers,
    principal,
    scope.workspaceId,
    deps.credentials,
    scope.modelRoute ? 'model' : undefined,
  );
  const target = resolved instanceof Promise ? await resolved : resolved;
  const sentModel = modelOfAttempt(leaf, json, scope.request, alias);
  if (sentModel !== undefined)
    assertModelAllowed(
      principal,
      { model: sentModel, providerSlug: target.stored?.slug ?? null, alias },
      target.stored?.models ?? null,
    );
  let attemptJson = json;
  let attemptRequest = scope.sent;
  if (scope.guard && json) {
    attemptJson = await scope.guard.checkTarget(leaf, json, target.provider.name);
    if (attemptJson !== json) attemptRequest = withJsonBody(scope.sent, attemptJson);
  }
  const override = leaf.settings.overrideParams?.model;
  const model = typeof override === 'string' ? override : scope.draft.model;
  // Only computed when a budget or a credential's limits need it.
  const estimate = () => estimateAttempt(deps, scope, leaf.settings, target, model, attemptJson);
  const { admission } = scope;
  if (admission.reservation === null) {
    const reserved = deps.limits.reserveBudgets(principal, scope.facts, estimate);
    admission.reservation = reserved instanceof Promise ? await reserved : reserved;
  }
  // The provider's or virtual key's own limits count only the attempts sent with it.
  const own = target.stored?.credential.limits
    ? await deps.limits.admitCredential(target.stored.credential.limits, scope.facts, estimate)
    : null;
  const call = (to: ResolvedTarget) =>
    callTarget(deps.call, {
      route: scope.route,
      request: attemptRequest,
      path: scope.path,
      json: attemptJson,
      headers: scope.headers,
      target: to,
      settings: leaf.settings,
      link: scope.link,
    });
  let outcome: AttemptOutcome<UpstreamAnswer>;
  try {
    outcome = await call(target);
    // Only a 401 can be a rotated secret: no extra step for any other answer.
    if (outcome.ok && outcome.status === 401)
      outcome = await retryWithFreshSecrets(
        outcome,
        { route: scope.route, target, headers: scope.headers, credentials: deps.credentials },
        call,
      );
  } catch (error) {
    if (own) await deps.limits.releaseCredential(own);
    throw error;
  }
  if (own && outcome.ok) mergeAdmission(admission, own);
  else if (own) await deps.limits.releaseCredential(own);
  return { ...outcome, provider: target.provider.name };
}

/**
 * The cost and tokens an attempt may use, for budgets: the body as the provider gets it,
 * override_params included. At once when the model's price and output bound are in memory.
 */
function estimateAttempt(
  deps: AttemptDeps,
  scope: AttemptScope,
  settings: LeafSettings,
  target: ResolvedTarget,
  model: string | null,
  json: Record<string, unknown> | null,
): MaybePromise<EstimateBound> {
  const { request } = scope;
  const override = settings.overrideParams;
  const bound = (price: ModelPrice | null, maxOutputTokens: number | null) =>
    boundRequest({
      endpointType: scope.route.endpointType,
      method: request.method,
      body: json && override ? { ...json, ...override } : json,
      bodyBytes: request.rawBody?.length ?? (Number(request.headers['content-length']) || 0),
      model: model ?? null,
      price,
      maxOutputTokens,
    });
  if (!model) return bound(null, null);
  const price = deps.pricing.priceOf(target.provider.name, model);
  const maxOutput = deps.pricing.maxOutputOf(target.provider.name, model);
  if (price instanceof Promise || maxOutput instanceof Promise)
    return Promise.all([price, maxOutput]).then(([known, most]) => bound(known, most));
  return bound(price, maxOutput);
}

/**
 * The model an attempt sends, as far as it is known before the call: the leaf's override, else the
 * body's. Null when it cannot be read first (a JSON or multipart body that streams through, a JSON
 * body without one); undefined when the request carries none (GET, a file's bytes).
 * A config reached through an alias must name the model in each target: the alias is no model.
 */
function modelOfAttempt(
  leaf: Leaf,
  json: Record<string, unknown> | null,
  request: GatewayRequest,
  alias: string | null,
): string | null | undefined {
  const override = leaf.settings.overrideParams?.model;
  if (typeof override === 'string') return override;
  if (alias !== null && leaf.node !== null && json?.model === alias)
    throw new AppError(
      'INVALID_REQUEST',
      `The alias ${alias} routes to a config whose target ${leaf.label} sets no override_params.model; set one on each target (or on the config).`,
      { param: 'model' },
    );
  if (json) return typeof json.model === 'string' ? json.model : null;
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD' && request.method !== 'DELETE';
  return hasBody && bodyKindOf(request.headers['content-type']) !== null ? null : undefined;
}

/** The request with another JSON body, as the provider gets it (the bytes re-encoded). */
export function withJsonBody(request: GatewayRequest, json: Record<string, unknown>): GatewayRequest {
  return Object.create(request, {
    body: { value: json, writable: true },
    rawBody: { value: Buffer.from(JSON.stringify(json)) },
  }) as GatewayRequest;
}

/** Which target served and how many tries it took, in the log record and the response headers. */
function recordRouting(reply: GatewayReply, draft: RequestLogDraft, routed: RouteResult<UpstreamAnswer>): void {
  const retries = routed.attempts.length - 1;
  draft.attempts = JSON.stringify(routed.attempts);
  draft.retryCount = retries;
  reply.header('x-service-target', routed.leaf.label);
  reply.header('x-service-retry-count', String(retries));
  const last = routed.attempts[routed.attempts.length - 1];
  if (last?.provider && !routed.outcome.ok) draft.provider = last.provider;
}

/** Per config, as the router works out its plan once per config object (never keyed by a request). */
const withoutRetriesOf = new WeakMap<GatewayConfig, GatewayConfig>();

/** The same routing choice without retries: for bodies that stream through and cannot be resent. */
function withoutRetries(config: GatewayConfig): GatewayConfig {
  let stripped = withoutRetriesOf.get(config);
  if (!stripped) {
    stripped = stripRetries(config);
    withoutRetriesOf.set(config, stripped);
  }
  return stripped;
}

function stripRetries(config: GatewayConfig): GatewayConfig {
  const strip = (node: GatewayConfig): GatewayConfig => {
    const { retry: _retry, ...rest } = node;
    const targets = node.targets?.map(strip);
    const strategy = node.strategy?.mode === 'fallback' ? { ...node.strategy, mode: 'single' as const } : node.strategy;
    if (strategy?.mode === 'single' && targets) return { ...rest, strategy, targets: targets.slice(0, 1) };
    return { ...rest, ...(strategy ? { strategy } : {}), ...(targets ? { targets } : {}) };
  };
  return strip(config);
}
