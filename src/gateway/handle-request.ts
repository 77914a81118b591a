import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import type { Principal } from '../auth/principal.js';
import { cacheResponseHeaders, type ResponseCache } from '../cache/index.js';
import type { Config } from '../config/schema.js';
import type { ServedDeploymentLookup } from '../deployments/served-deployment.js';
import { isoAt, type Clock } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import { withoutUrlCredentials } from '../lib/mask.js';
import { rateHeaders, RateLimitedError, type LimitsService } from '../limits/limits-service.js';
import type { PricingService } from '../pricing/pricing-service.js';
import type { RequestLogWriter } from '../telemetry/request-log-writer.js';
import type { ClientLink } from './call-target.js';
import { attemptTargets, withJsonBody, type AttemptDeps, type AttemptScope } from './attempt-targets.js';
import { lookUpCache, sendCached } from './cached-answer.js';
import { assertDeploymentServes, deploymentConfig } from './deployment-rules.js';
import type { GatewayReply, GatewayRequest, GatewayRoute } from './exchange.js';
import { readGatewayHeaders, type GatewayHeaders } from './gateway-headers.js';
import {
  GuardrailDenial,
  startGuardrails,
  type GatewayGuardrails,
  type RequestGuard,
} from './guardrails/request-guard.js';
import { RequestAbort } from './guardrails/request-abort.js';
import { hasModelLimits, limitAllows } from './model-access.js';
import { chooseByModel, modelMayRoute } from './model-route.js';
import { withModelSniffer } from './model-sniffer.js';
import { relayAnswer } from './relay-answer.js';
import { finishWhenClosed, type RequestTrail } from './request-finish.js';
import { RequestLogDraft } from './request-log-draft.js';
import type { CredentialLookup } from './resolve-target.js';
import type { ConfigSelector, SelectedConfig } from './routing/config-selector.js';
import { upstreamFailure, type UpstreamClient } from './upstream-client.js';

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
  const eventTimeoutMs = deps.config.upstream_body_timeout_ms;
  const attemptDeps: AttemptDeps = {
    call: { upstream: deps.upstream, now: deps.clock.now },
    credentials: deps.credentials,
    limits: deps.limits,
    pricing: deps.pricing,
    sleep: deps.sleep ?? defaultSleep,
  };

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
      request.prompt?.path ?? withoutQuery(request.url),
      request.id,
      deps.clock.now(),
      performance.now(),
    );
    reply.header('x-service-request-id', draft.id); // the log record's id: GET /v1/logs/{id}
    draft.prompt = request.prompt ?? null;
    const trail: RequestTrail = {
      draft,
      admission: { tokenLimits: [], reservation: null, headers: null },
      link: { gone: false, call: null },
      served: null,
      plainJson: null,
      guard: null,
      guardAbort: null,
    };
    finishWhenClosed(deps, reply, trail);

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
      if (deps.logs.followingStarts)
        deps.logs.started({
          id: draft.id,
          organisation_id: principal.organisationId,
          workspace_id: workspaceId,
          api_key_id: principal.keyId,
          endpoint_type: route.endpointType,
          method: draft.method,
          path: draft.path,
          model: draft.model,
          created_at: isoAt(draft.startedAt),
        });
      if (capture > 0 && request.rawBody) draft.requestBody = request.rawBody.subarray(0, capture).toString('utf8');

      const deployment = deps.deployment ? await deps.deployment.current() : null;
      const known = deps.limits.facts(principal, workspaceId, route.endpointType, metadata, deployment?.limits);
      const facts = known instanceof Promise ? await known : known;
      if (deployment) assertDeploymentServes(deployment, principal, { id: workspaceId, slug: facts.workspaceSlug });
      const { admission } = trail;
      const rate = deps.limits.admitRate(principal, facts);
      Object.assign(admission, rate instanceof Promise ? await rate : rate);
      if (admission.headers) reply.headers(rateHeaders(admission.headers, deps.clock.now()));

      const choice =
        json && modelMayRoute(request.headers)
          ? await chooseByModel(deps.credentials, principal, workspaceId, json.model)
          : null;
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
      let guard: RequestGuard | null = null;
      if (deps.guardrails) {
        const started = startGuardrails(deps.guardrails, {
          route,
          organisationId: principal.organisationId,
          workspaceId,
          apiKeyId: principal.keyId,
          config: selected?.config ?? null,
          request,
          metadata: metadata ?? {},
          model: draft.requestedModel ?? undefined,
          traceId: headers.traceId,
          signal: () => {
            // Aborted on close like the AbortController the trail expects; its signal is made on first read.
            const abort = new RequestAbort();
            trail.guardAbort = abort;
            return abort;
          },
          draft,
          capture,
        });
        guard = trail.guard = started instanceof Promise ? await started : started;
        if (guard && json) {
          const checking = guard.checkRequest(json);
          const checked = checking instanceof Promise ? await checking : checking;
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
      const scope: AttemptScope = {
        route,
        request,
        sent,
        json,
        path,
        headers,
        principal,
        workspaceId,
        facts,
        admission,
        modelRoute: choice?.kind === 'route' ? choice.route : null,
        alias,
        guard,
        link: trail.link,
        draft,
      };
      const { outcome, servedLeaf } = await attemptTargets(
        attemptDeps,
        scope,
        selected?.config ?? null,
        metadata,
        reply,
      );
      if (!outcome.ok) throw outcome.error;

      const answer = outcome.response;
      trail.served = answer;
      draft.provider = answer.target.provider.name;
      draft.credentialSource = answer.target.source;
      if (answer.body && typeof answer.body.model === 'string') draft.model = answer.body.model;
      draft.markFirstByte(performance.now());
      reply.header('x-service-provider', answer.target.provider.name);
      if (guard && answer.json && answer.res.bytes) guard.knowAnswer(answer.res.bytes, answer.json);
      guard?.guardAnswer(reply, draft, answer.body ?? json, servedLeaf, answer.target.provider.name);
      const relayed = relayAnswer(reply, draft, answer, { capture, link: trail.link, cache, eventTimeoutMs });
      if (answer.body === null && answer.res.body) recordPassThroughFailure(answer.res.body, draft, trail.link);
      trail.plainJson = relayed.plainJson;
      return relayed.sent;
    } catch (error) {
      if (error instanceof GuardrailDenial && trail.guard) return trail.guard.deny(reply, draft);
      if (error instanceof RateLimitedError) reply.headers(error.headers);
      const failure = withoutCredentials(error instanceof AppError ? error : upstreamFailure(error));
      draft.errorCode = failure.code;
      draft.errorMessage = failure.message;
      throw failure;
    }
  };
}

/**
 * A pass-through body that fails as it streams (the provider's connection breaks, or its
 * chunked encoding is malformed) is the provider's failure: logged as such, whether it was
 * answered with the error (nothing sent yet) or the client's connection was ended mid-body.
 */
function recordPassThroughFailure(body: Readable, draft: RequestLogDraft, link: ClientLink) {
  body.once('error', (error) => {
    if (link.gone || draft.errorCode !== null) return;
    const failure = withoutCredentials(upstreamFailure(error));
    draft.errorCode = failure.code;
    draft.errorMessage = failure.message;
  });
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

/** The path of a request URL: a slice, not an array from split. */
function withoutQuery(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** An error whose message quotes a URL with a password in it (a custom host) loses the password. */
function withoutCredentials(error: AppError): AppError {
  const message = withoutUrlCredentials(error.message);
  return message === error.message
    ? error
    : new AppError(error.code, message, { param: error.param, cause: error.cause });
}

export type { GatewayHeaders };
