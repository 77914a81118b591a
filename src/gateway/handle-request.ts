import { performance } from 'node:perf_hooks';
import { cacheResponseHeaders, isCacheHit, type ResponseCache } from '../cache/index.js';
import type { Config } from '../config/schema.js';
import type { Clock } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import { boundRequest } from '../limits/estimate.js';
import {
  mergeAdmission,
  rateHeaders,
  RateLimitedError,
  type Admission,
  type LimitsService,
} from '../limits/limits-service.js';
import type { PricingService } from '../pricing/pricing-service.js';
import type { RequestLogWriter } from '../telemetry/request-log-writer.js';
import type { GatewayReply, GatewayRequest, GatewayRoute } from './exchange.js';
import { callTarget, discardAnswer, type UpstreamAnswer } from './call-target.js';
import { readGatewayHeaders, type GatewayHeaders } from './gateway-headers.js';
import { parseJson, relayAnswer } from './relay-answer.js';
import { lookUpCache, sendCached } from './cached-answer.js';
import { RequestLogDraft } from './request-log-draft.js';
import { resolveLeafTarget, type CredentialLookup, type ResolvedTarget } from './resolve-target.js';
import { retryWithFreshSecrets } from './secret-refresh.js';
import type { ConfigSelector, SelectedConfig } from './routing/config-selector.js';
import {
  HEADERS_LEAF,
  route as routeRequest,
  type AttemptOutcome,
  type Leaf,
  type RouteResult,
} from './routing/router.js';
import { upstreamFailure, type UpstreamClient } from './upstream-client.js';
import { usageFromBody } from '../providers/usage.js';
import { bodyKindOf, withModelSniffer } from './model-sniffer.js';
import type { Principal } from '../auth/principal.js';
import { chooseByModel, modelMayRoute, modelRouteLeaf } from './model-route.js';
import { assertModelAllowed, hasModelLimits, limitAllows } from './model-access.js';
import { withoutUrlCredentials } from '../lib/mask.js';
import type { ServedDeploymentLookup } from '../deployments/served-deployment.js';
import { assertDeploymentServes, deploymentConfig } from './deployment-rules.js';
import {
  GuardrailDenial,
  startGuardrails,
  type GatewayGuardrails,
  type RequestGuard,
} from './guardrails/request-guard.js';

export interface GatewayDeps {
  config: Config;
  clock: Clock;
  upstream: UpstreamClient;
  credentials: CredentialLookup;
  configs: ConfigSelector;
  cache: ResponseCache;
  logs: RequestLogWriter;
  pricing: PricingService;
  limits: LimitsService;
  defaultWorkspaceId: (organisationId: string) => Promise<string>;
  /** Guardrails; null when GUARDRAILS_ENABLED is OFF. */
  guardrails: GatewayGuardrails | null;
  /** The deployment this instance serves (`serve --deployment`), or absent. */
  deployment?: ServedDeploymentLookup | null;
  /** Backoff between retries; tests may shorten it. */
  sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The data-plane pipeline for one request: limits → config → route across targets (each
 * attempt: credentials → upstream call) → relay (streamed as it arrives) → one log record,
 * written off the hot path when the response has ended.
 */
export function createGatewayHandler(deps: GatewayDeps) {
  const capture = deps.config.log_bodies ? deps.config.log_body_max_bytes : 0;
  const sleep = deps.sleep ?? defaultSleep;
  const callDeps = { upstream: deps.upstream, now: deps.clock.now };

  return async function handle(route: GatewayRoute, request: GatewayRequest, reply: GatewayReply): Promise<unknown> {
    const principal = request.principal!;
    const path = request.url.slice('/v1'.length) || '/';
    const workspaceId =
      principal.workspaceId ?? request.prompt?.workspaceId ?? (await deps.defaultWorkspaceId(principal.organisationId));
    const draft = new RequestLogDraft(
      principal,
      workspaceId,
      route.endpointType,
      request.method,
      request.prompt?.path ?? request.url.split('?')[0] ?? request.url,
      request.id,
      deps.clock.now(),
      performance.now(),
    );
    reply.header('x-service-request-id', draft.id); // the log record's id: GET /v1/logs/{id}
    draft.prompt = request.prompt ?? null;
    const admission: Admission = { tokenLimits: [], reservation: null, headers: null };
    let controller: AbortController | null = null;
    let closed = false;
    let served: UpstreamAnswer | null = null;
    let plainJson: Buffer | null = null;
    let guard: RequestGuard | null = null;
    let guardAbort: AbortController | null = null;
    reply.raw.once('close', () => {
      closed = true;
      if (plainJson) readUsage(draft, plainJson);
      const finished = reply.raw.writableFinished;
      if (!finished) {
        controller?.abort();
        guardAbort?.abort();
      }
      const status = finished || reply.statusCode >= 400 ? reply.statusCode : 499;
      if (!finished && draft.errorCode === null) draft.errorCode = 'CLIENT_CLOSED_REQUEST';
      const endedPerf = performance.now();
      const completed = priced(draft, deps.pricing).then(async () => {
        if (guard) await guard.record(draft);
        await deps.limits.settle(admission, actualUsage(draft, served));
        return draft.finish(status, endedPerf);
      });
      deps.logs.enqueueWhenReady(completed);
    });

    try {
      const headers = readGatewayHeaders(request.headers);
      draft.traceId = headers.traceId;
      draft.spanId = headers.spanId;
      draft.parentSpanId = headers.parentSpanId;
      draft.spanName = headers.spanName;
      const keyMetadata = principal.defaults?.metadata;
      let metadata =
        keyMetadata && Object.keys(keyMetadata).length > 0 ? { ...keyMetadata, ...headers.metadata } : headers.metadata;
      // A JWT's user is logged as the token says, whatever the request's own metadata claims.
      if (principal.userLabel) metadata = { ...metadata, _user: principal.userLabel };
      draft.metadata = metadata;
      reply.header('x-service-trace-id', headers.traceId);

      let json = route.body === 'json' ? (request.body as Record<string, unknown>) : null;
      let sent = request;
      if (json && typeof json.model === 'string') draft.model = draft.requestedModel = json.model;
      if (route.body === 'raw')
        request.body = withModelSniffer(
          request.body,
          request.headers['content-type'],
          (model) => (draft.model = draft.requestedModel = model),
        );
      draft.isStream = json?.stream === true;
      deps.logs.started({
        id: draft.id,
        organisation_id: principal.organisationId,
        workspace_id: workspaceId,
        api_key_id: principal.keyId,
        endpoint_type: route.endpointType,
        method: draft.method,
        path: draft.path,
        model: draft.model,
        created_at: new Date(draft.startedAt).toISOString(),
      });
      if (capture > 0 && request.rawBody) draft.requestBody = request.rawBody.subarray(0, capture).toString('utf8');

      const deployment = deps.deployment ? await deps.deployment.current() : null;
      const facts = await deps.limits.facts(principal, workspaceId, route.endpointType, metadata, deployment?.limits);
      if (deployment) assertDeploymentServes(deployment, principal, { id: workspaceId, slug: facts.workspaceSlug });
      Object.assign(admission, await deps.limits.admitRate(principal, facts));
      if (admission.headers) reply.headers(rateHeaders(admission.headers, deps.clock.now()));

      const choice =
        json && modelMayRoute(request.headers)
          ? await chooseByModel(deps.credentials, principal, workspaceId, json.model)
          : null;
      const modelRoute = choice?.kind === 'route' ? choice.route : null;
      const alias = choice?.alias ?? null;
      const configHeader = request.headers['x-service-config'];
      // A config named by the request (or its alias) wins, then the key's default, then the deployment's.
      const selected =
        choice?.kind === 'config'
          ? await aliasConfig(deps.configs, choice.configId, choice.alias, principal, workspaceId)
          : choice === null && (configHeader !== undefined || principal.defaults?.config_id)
            ? await deps.configs.select(configHeader, principal, workspaceId)
            : choice === null && deployment
              ? await deploymentConfig(deps.configs, deployment)
              : null;
      if (selected) draft.configId = selected.id;
      if (deps.guardrails) {
        guard = await startGuardrails(deps.guardrails, {
          route,
          organisationId: principal.organisationId,
          workspaceId,
          apiKeyId: principal.keyId,
          config: selected?.config ?? null,
          request,
          metadata: metadata ?? {},
          model: draft.requestedModel ?? undefined,
          traceId: headers.traceId,
          signal: () => (guardAbort ??= new AbortController()).signal,
          draft,
          capture,
        });
        if (guard && json) {
          const checked = await guard.checkRequest(json);
          if (checked === null) return guard.deny(reply, draft);
          if (checked !== json) {
            json = checked;
            sent = withJsonBody(request, json);
          }
        }
      }
      const requestedModel = json && typeof json.model === 'string' ? json.model : null;
      // A key limited to some models reads the cache only for a model it may ask for.
      const cacheable =
        !hasModelLimits(principal) ||
        (requestedModel !== null &&
          limitAllows(principal.defaults?.allowed_models, { model: requestedModel, providerSlug: null, alias }) &&
          limitAllows(principal.workspaceAllowedModels, { model: requestedModel, providerSlug: null, alias }));
      const cache =
        selected?.config.cache && json && cacheable
          ? await lookUpCache(deps.cache, selected, json, headers, principal.organisationId, workspaceId, path)
          : null;
      if (cache) {
        draft.cacheStatus = cache.status;
        reply.headers(cacheResponseHeaders(cache));
        if (cache.hit) {
          guard?.guardAnswer(reply, draft, json, null, undefined);
          return sendCached(reply, draft, cache);
        }
      }
      // A streamed request body can be sent only once: raw routes get one attempt at one target.
      const config = selected && route.body === 'raw' ? withoutRetries(selected.config) : (selected?.config ?? null);

      const attempt = async (leaf: Leaf) => {
        const target = await resolveLeafTarget(
          leaf.node,
          headers,
          principal,
          workspaceId,
          deps.credentials,
          modelRoute ? 'model' : undefined,
        );
        const sentModel = modelOfAttempt(leaf, json, request, alias);
        if (sentModel !== undefined)
          assertModelAllowed(
            principal,
            { model: sentModel, providerSlug: target.stored?.slug ?? null, alias },
            target.stored?.models ?? null,
          );
        let attemptJson = json;
        let attemptRequest = sent;
        if (guard && json) {
          attemptJson = await guard.checkTarget(leaf, json, target.provider.name);
          if (attemptJson !== json) attemptRequest = withJsonBody(sent, attemptJson);
        }
        const model =
          typeof leaf.settings.overrideParams?.model === 'string' ? leaf.settings.overrideParams.model : draft.model;
        const estimate = async () => {
          const [price, maxOutputTokens] = model
            ? await Promise.all([
                deps.pricing.priceOf(target.provider.name, model),
                deps.pricing.maxOutputOf(target.provider.name, model),
              ])
            : [null, null];
          const bodyBytes = request.rawBody?.length ?? (Number(request.headers['content-length']) || 0);
          // The body as the provider gets it: a config's override_params (max_tokens, …) included.
          const body =
            attemptJson && leaf.settings.overrideParams
              ? { ...attemptJson, ...leaf.settings.overrideParams }
              : attemptJson;
          return boundRequest({
            endpointType: route.endpointType,
            method: request.method,
            body,
            bodyBytes,
            model: model ?? null,
            price,
            maxOutputTokens,
          });
        };
        if (admission.reservation === null)
          admission.reservation = await deps.limits.reserveBudgets(principal, facts, estimate);
        // The provider's or virtual key's own limits count only the attempts sent with it.
        const own = target.stored?.credential.limits
          ? await deps.limits.admitCredential(target.stored.credential.limits, facts, estimate)
          : null;
        const call = (to: ResolvedTarget) => {
          controller = new AbortController();
          return callTarget(callDeps, {
            route,
            request: attemptRequest,
            path,
            json: attemptJson,
            headers,
            target: to,
            settings: leaf.settings,
            controller,
          });
        };
        let outcome: Awaited<ReturnType<typeof call>>;
        try {
          outcome = await retryWithFreshSecrets(
            await call(target),
            { route, target, headers, credentials: deps.credentials },
            call,
          );
        } catch (error) {
          if (own) await deps.limits.releaseCredential(own);
          throw error;
        }
        if (own && outcome.ok) mergeAdmission(admission, own);
        else if (own) await deps.limits.releaseCredential(own);
        return { ...outcome, provider: target.provider.name };
      };
      let outcome: AttemptOutcome<UpstreamAnswer>;
      let servedLeaf: string | null = null;
      if (config) {
        const routed = await routeRequest(
          config,
          { metadata, params: json },
          { attempt, discard: discardAnswer, sleep, random: Math.random, cancelled: () => closed },
        );
        recordRouting(reply, draft, routed);
        outcome = routed.outcome;
        servedLeaf = routed.leaf.label;
      } else {
        // No config: one try at the target the model (`@slug/model`) or the headers name.
        outcome = await attempt(modelRoute ? modelRouteLeaf(modelRoute) : HEADERS_LEAF);
      }
      if (!outcome.ok) throw outcome.error;

      const answer = outcome.response;
      served = answer;
      draft.provider = answer.target.provider.name;
      draft.credentialSource = answer.target.source;
      if (answer.body && typeof answer.body.model === 'string') draft.model = answer.body.model;
      draft.markFirstByte(performance.now());
      reply.header('x-service-provider', answer.target.provider.name);
      guard?.guardAnswer(reply, draft, answer.body ?? json, servedLeaf, answer.target.provider.name);
      const relayed = relayAnswer(reply, draft, answer, { capture, aborted: () => closed, cache });
      plainJson = relayed.plainJson;
      return relayed.sent;
    } catch (error) {
      if (error instanceof GuardrailDenial && guard) return guard.deny(reply, draft);
      if (error instanceof RateLimitedError) reply.headers(error.headers);
      const failure = withoutCredentials(error instanceof AppError ? error : upstreamFailure(error));
      draft.errorCode = failure.code;
      draft.errorMessage = failure.message;
      throw failure;
    }
  };
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

/** The config an alias names; one that is no longer active is reported against the model name. */
async function aliasConfig(
  configs: ConfigSelector,
  configId: string,
  alias: string,
  principal: Principal,
  workspaceId: string,
): Promise<SelectedConfig | null> {
  try {
    return await configs.select(configId, principal, workspaceId);
  } catch (error) {
    if (error instanceof AppError && error.code === 'CONFIG_NOT_FOUND')
      throw new AppError(
        'CONFIG_NOT_FOUND',
        `The alias ${alias} names a config that is no longer active for this key.`,
        {
          param: 'model',
        },
      );
    throw error;
  }
}

/** The request with another JSON body, as the provider gets it (the bytes re-encoded). */
function withJsonBody(request: GatewayRequest, json: Record<string, unknown>): GatewayRequest {
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

/** The same routing choice without retries: for bodies that stream through and cannot be resent. */
function withoutRetries(config: NonNullable<Parameters<typeof routeRequest>[0]>): typeof config {
  const strip = (node: typeof config): typeof config => {
    const { retry: _retry, ...rest } = node;
    const targets = node.targets?.map(strip);
    const strategy = node.strategy?.mode === 'fallback' ? { ...node.strategy, mode: 'single' as const } : node.strategy;
    if (strategy?.mode === 'single' && targets) return { ...rest, strategy, targets: targets.slice(0, 1) };
    return { ...rest, ...(strategy ? { strategy } : {}), ...(targets ? { targets } : {}) };
  };
  return strip(config);
}

/**
 * What a finished request used, for its limits: the provider's usage when it reported one;
 * the reservation as it stands when the provider answered but the usage never arrived; nothing
 * when no provider answered successfully.
 */
function actualUsage(draft: RequestLogDraft, served: UpstreamAnswer | null) {
  if (draft.usage) return { cost: draft.cost, tokens: draft.usage.totalTokens, usage: draft.usage };
  if (served !== null && served.res.statusCode < 400 && draft.errorCode !== null) return 'as-reserved' as const;
  return null;
}

/**
 * Prices the request from its usage; pricing answers from memory for known models. A cache hit
 * costs nothing; what the provider call it replaced would have cost is its saving.
 */
async function priced(draft: RequestLogDraft, pricing: PricingService): Promise<void> {
  const replaced = draft.replacedCall;
  if (replaced?.usage && isCacheHit(draft.cacheStatus as never)) {
    draft.cacheSavings = await pricing.costOf(replaced.provider, replaced.model, replaced.usage).catch(() => null);
    return;
  }
  if (draft.usage === null || isCacheHit(draft.cacheStatus as never)) return;
  try {
    draft.cost = await pricing.costOf(draft.provider, draft.model, draft.usage);
  } catch {
    draft.cost = null; // unknown, never zero
  }
}

function readUsage(draft: RequestLogDraft, bytes: Buffer): void {
  const parsed = parseJson(bytes);
  draft.usage = usageFromBody(parsed);
  if (parsed && typeof (parsed as { model?: unknown }).model === 'string')
    draft.model = (parsed as { model: string }).model;
}

/** An error whose message quotes a URL with a password in it (a custom host) loses the password. */
function withoutCredentials(error: AppError): AppError {
  const message = withoutUrlCredentials(error.message);
  return message === error.message
    ? error
    : new AppError(error.code, message, { param: error.param, cause: error.cause });
}

export type { GatewayHeaders };
