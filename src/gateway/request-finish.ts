import { performance } from 'node:perf_hooks';
import { isCacheHit } from '../cache/index.js';
import type { Admission, LimitsService } from '../limits/limits-service.js';
import { andThen, rejectThrows, type MaybePromise } from '../lib/maybe-promise.js';
import type { PricingService } from '../pricing/pricing-service.js';
import { plausibleUsage, usageFromBody } from '../providers/usage.js';
import type { RequestLogWriter } from '../telemetry/request-log-writer.js';
import type { ClientLink, UpstreamAnswer } from './call-target.js';
import type { GatewayReply } from './exchange.js';
import type { RequestGuard } from './guardrails/request-guard.js';
import { largeAnswerFacts, PARSE_WHOLE_LIMIT } from './large-answer.js';
import { parseJson } from './relay-answer.js';
import type { RequestLogDraft } from './request-log-draft.js';
import { callAborted } from './upstream-call.js';

/** What the end of a request needs, filled in as the request goes. */
export interface RequestTrail {
  draft: RequestLogDraft;
  admission: Admission;
  link: ClientLink;
  /** The answer relayed, once there is one. */
  served: UpstreamAnswer | null;
  /** A plain JSON answer's bytes, whose usage is read once the reply is on its way. */
  plainJson: Buffer | null;
  guard: RequestGuard | null;
  guardAbort: AbortController | null;
}

export interface FinishDeps {
  pricing: PricingService;
  limits: LimitsService;
  logs: RequestLogWriter;
}

/**
 * When the client's connection for this request closes (answered or gone): stops what still runs
 * for a client that left, then prices the request, settles its limits and writes its log record,
 * off the hot path.
 */
export function finishWhenClosed(deps: FinishDeps, reply: GatewayReply, trail: RequestTrail): void {
  // 'close' comes once per response: no need for once()'s wrapper.
  reply.raw.on('close', () => {
    const { draft, link } = trail;
    link.gone = true;
    if (trail.plainJson) readUsage(draft, trail.plainJson, trail.served, trail.guard);
    const finished = reply.raw.writableFinished;
    if (!finished) {
      link.call?.abort(callAborted());
      trail.guardAbort?.abort();
      if (draft.errorCode === null) draft.errorCode = 'CLIENT_CLOSED_REQUEST';
    }
    const status = finished || reply.statusCode >= 400 ? reply.statusCode : 499;
    const endedPerf = performance.now();
    deps.logs.enqueueWhenReady(rejectThrows(() => settle(deps, trail, status, endedPerf)));
  });
}

/** The request's log record once it is priced and its limits settled: at once when nothing had to be waited for. */
function settle(deps: FinishDeps, trail: RequestTrail, status: number, endedPerf: number) {
  const { draft, guard } = trail;
  const recorded = andThen(priced(draft, deps.pricing), () => guard?.record(draft));
  const settled = andThen(recorded, () => deps.limits.settle(trail.admission, actualUsage(draft, trail.served)));
  return andThen(settled, () => draft.finish(status, endedPerf));
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
function priced(draft: RequestLogDraft, pricing: PricingService): MaybePromise<void> {
  const replaced = draft.replacedCall;
  if (replaced?.usage && isCacheHit(draft.cacheStatus as never)) {
    const usage = plausibleUsage(replaced.usage);
    return costOrNull(
      () => pricing.costOf(replaced.provider, replaced.model, usage),
      (cost) => (draft.cacheSavings = cost),
    );
  }
  const { usage } = draft;
  if (usage === null || isCacheHit(draft.cacheStatus as never)) return;
  return costOrNull(
    () => pricing.costOf(draft.provider, draft.model, usage),
    (cost) => (draft.cost = cost),
  );
}

/** Hands `set` the cost, or null (unknown, never zero) when pricing fails. */
function costOrNull(cost: () => MaybePromise<number | null>, set: (cost: number | null) => void): MaybePromise<void> {
  const known = rejectThrows(cost);
  if (!(known instanceof Promise)) return set(known);
  return known.then(set, () => set(null));
}

/**
 * The answer's usage and model; an answer parsed when it was judged, or by the guardrails, is not
 * parsed again, and a large one is not parsed at all.
 */
function readUsage(draft: RequestLogDraft, bytes: Buffer, served: UpstreamAnswer | null, guard: RequestGuard | null) {
  const parsed = (served?.res.bytes === bytes ? served.json : undefined) ?? guard?.parsedAnswer(bytes);
  if (!parsed && bytes.length > PARSE_WHOLE_LIMIT) {
    const facts = largeAnswerFacts(bytes);
    draft.usage = facts.usage;
    if (facts.model !== null) draft.model = facts.model;
    return;
  }
  const json = parsed ?? parseJson(bytes);
  draft.usage = usageFromBody(json);
  if (json && typeof (json as { model?: unknown }).model === 'string') draft.model = (json as { model: string }).model;
}
