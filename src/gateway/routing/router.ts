import { performance } from 'node:perf_hooks';
import { GUARDRAIL_FIELDS } from '../../guardrails/store/index.js';
import { AppError } from '../../lib/errors.js';
import type { ConfigTarget, GatewayConfig } from '../config/schema.js';
import { backoffDelay, MAX_RETRY_AFTER_MS } from './backoff.js';
import { firstMatch, type ConditionFacts } from './conditions.js';

/** What a leaf inherits from the nodes above it: the nearest setting wins, override_params merge. */
export interface LeafSettings {
  overrideParams: Readonly<Record<string, unknown>> | null;
  retry: ConfigTarget['retry'] | null;
  requestTimeoutMs: number | null;
  anthropicBeta: string | undefined;
  azureEntraScope: string | undefined;
  /** Nodes below the root on the way to the leaf that name guardrails: they run for this leaf only. */
  guardrailNodes: readonly ConfigTarget[];
}

/** One provider target the router may call: a leaf of the config tree (or the request's own headers). */
export interface Leaf {
  /** The config node; null when no config routes the request. */
  node: ConfigTarget | null;
  /** Where the leaf sits, for logs and headers: its `name`, else its path (`targets[1].targets[0]`), `root` for the root. */
  label: string;
  /** Its index path in the config (`targets[1].targets[0]`) when that is not its label; absent for the root. */
  path?: string;
  settings: LeafSettings;
}

/** One try at one target: an answer with a status, or no answer at all (network error, time-out). */
export type AttemptOutcome<R> =
  { ok: true; status: number; response: R; retryAfterMs: number | null } | { ok: false; error: AppError };

export interface AttemptRecord {
  target: string;
  /** The target's index path when `target` is a name: the log's `lastUsedOptionJsonPath` comes from it. */
  path?: string;
  provider: string | null;
  status: number | null;
  latency_ms: number;
  error_code?: string;
}

export interface RouteHooks<R> {
  /** Calls the target once. Throws an AppError for a request that no target could serve (bad config, unknown provider). */
  attempt(leaf: Leaf): Promise<AttemptOutcome<R> & { provider: string | null }>;
  /** Releases an answer that will not be used (its body is drained or destroyed). */
  discard(response: R): void;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  /** True once the client has gone: no further tries. */
  cancelled(): boolean;
}

export interface RouteResult<R> {
  outcome: AttemptOutcome<R>;
  leaf: Leaf;
  attempts: AttemptRecord[];
}

/** Fallback moves on for these when `strategy.on_status_codes` is not given: 429 and every 5xx. */
const isDefaultFallbackStatus = (status: number) => status === 429 || status >= 500;
/** Retried when `retry.on_status_codes` is not given. */
const DEFAULT_RETRY_STATUSES: readonly number[] = [429, 500, 502, 503, 504];

const NO_SETTINGS: LeafSettings = Object.freeze({
  overrideParams: null,
  retry: null,
  requestTimeoutMs: null,
  anthropicBeta: undefined,
  azureEntraScope: undefined,
  guardrailNodes: [],
});

/** The target of a request without a config: the one its headers name, tried once. */
export const HEADERS_LEAF: Leaf = Object.freeze({ node: null, label: 'root', settings: NO_SETTINGS });

/**
 * Walks a config tree for one request: picks targets (single, fallback, loadbalance,
 * conditional, nested to any depth), retries a target with backoff, and returns the answer
 * to relay with a record of every attempt. Without a config the request's own target is tried
 * once. Answers are handed back before their body is read: a stream is relayed by the caller,
 * so nothing here can restart it once it has begun.
 */
export function route<R>(
  config: GatewayConfig | null,
  facts: ConditionFacts,
  hooks: RouteHooks<R>,
): Promise<RouteResult<R>> {
  return runPlan(config ? planOf(config) : NO_CONFIG_PLAN, facts, hooks, []);
}

/**
 * What a config's tree is, worked out once per config (configs are cached and reused): each
 * node's children, and each leaf with its label, index path and inherited settings. A request
 * then only picks and attempts; it builds no labels, paths or settings of its own.
 */
type Plan =
  { leaf: Leaf } | { leaf: null; strategy: Strategy; targets: readonly ConfigTarget[]; children: readonly Plan[] };
type Strategy = NonNullable<GatewayConfig['strategy']>;

const NO_CONFIG_PLAN: Plan = { leaf: HEADERS_LEAF };
/** Keyed by the config object, which lives as long as its selection is cached (never by a request). */
const plans = new WeakMap<GatewayConfig, Plan>();

function planOf(config: GatewayConfig): Plan {
  let plan = plans.get(config);
  if (!plan) {
    plan = planNode(config, { label: 'root', path: '' }, inherit(NO_SETTINGS, config));
    plans.set(config, plan);
  }
  return plan;
}

/** A node's place in the tree: its label (name or index path) and its index path ('' for the root). */
interface Place {
  label: string;
  path: string;
}

function planNode(node: GatewayConfig, place: Place, settings: LeafSettings): Plan {
  const { targets, strategy } = node;
  if (!targets || !strategy) {
    const leaf: Leaf = { node, label: place.label, settings };
    if (place.path !== '' && place.path !== place.label) leaf.path = place.path;
    return { leaf: Object.freeze(leaf) };
  }
  const children = targets.map((target, i) => {
    const index = `targets[${i}]`;
    const childPlace = {
      label: target.name ?? (place.label === 'root' ? index : `${place.label}.${index}`),
      path: place.path === '' ? index : `${place.path}.${index}`,
    };
    return planNode(target, childPlace, withGuardrailNode(inherit(settings, target), target));
  });
  return { leaf: null, strategy, targets, children };
}

/**
 * Not async itself: a node that picks one child (single, loadbalance, conditional) hands back that
 * child's promise, so only a fallback's loop and the leaf's attempts are async functions (each
 * level of async function costs a promise, its frame and a turn of microtasks per request).
 */
function runPlan<R>(
  plan: Plan,
  facts: ConditionFacts,
  hooks: RouteHooks<R>,
  attempts: AttemptRecord[],
): Promise<RouteResult<R>> {
  if (plan.leaf) return runLeaf(plan.leaf, hooks, attempts);
  const { strategy, targets, children } = plan;
  let pick: number;
  switch (strategy.mode) {
    case 'fallback':
      return runFallback(children, strategy.on_status_codes, facts, hooks, attempts);
    case 'single':
      pick = 0;
      break;
    case 'loadbalance':
      pick = pickWeighted(targets, hooks.random);
      break;
    case 'conditional': {
      const matched = firstMatch(strategy.conditions ?? [], facts);
      if (matched instanceof Promise)
        return matched.then((condition) =>
          runPlan(children[conditionalPick(strategy, targets, condition)]!, facts, hooks, attempts),
        );
      pick = conditionalPick(strategy, targets, matched);
      break;
    }
  }
  return runPlan(children[pick]!, facts, hooks, attempts);
}

/** The child a conditional node goes to: the matched condition's target, else its default. */
function conditionalPick(
  strategy: Strategy,
  targets: readonly ConfigTarget[],
  matched: { then: string } | undefined,
): number {
  const name = matched?.then ?? strategy.default;
  return targets.findIndex((target) => target.name === name);
}

/** Tries the children in order until one answers with a status that does not move on (or the client has gone). */
async function runFallback<R>(
  children: readonly Plan[],
  codes: readonly number[] | undefined,
  facts: ConditionFacts,
  hooks: RouteHooks<R>,
  attempts: AttemptRecord[],
): Promise<RouteResult<R>> {
  let result = await runPlan(children[0]!, facts, hooks, attempts);
  for (let i = 1; i < children.length; i++) {
    const { outcome } = result;
    const movesOn = !outcome.ok || (codes ? codes.includes(outcome.status) : isDefaultFallbackStatus(outcome.status));
    if (!movesOn || hooks.cancelled()) break;
    if (outcome.ok) hooks.discard(outcome.response);
    result = await runPlan(children[i]!, facts, hooks, attempts);
  }
  return result;
}

async function runLeaf<R>(leaf: Leaf, hooks: RouteHooks<R>, attempts: AttemptRecord[]): Promise<RouteResult<R>> {
  const retry = leaf.settings.retry;
  const retries = retry?.attempts ?? 0;
  const retryStatuses = retry?.on_status_codes ?? DEFAULT_RETRY_STATUSES;
  for (let n = 0; ; n++) {
    const started = performance.now();
    const outcome = await hooks.attempt(leaf);
    const status = outcome.ok ? outcome.status : null;
    const latency_ms = Math.round((performance.now() - started) * 1000) / 1000;
    // Two literals rather than a spread: the same keys in the same order (the log's JSON), no object copied.
    const record: AttemptRecord = leaf.path
      ? { target: leaf.label, path: leaf.path, provider: outcome.provider, status, latency_ms }
      : { target: leaf.label, provider: outcome.provider, status, latency_ms };
    if (!outcome.ok) record.error_code = outcome.error.code;
    attempts.push(record);

    const retryable = !outcome.ok || retryStatuses.includes(outcome.status);
    if (!retryable || n >= retries || hooks.cancelled()) return { outcome, leaf, attempts };
    let wait = backoffDelay(n, hooks.random);
    if (outcome.ok && retry?.use_retry_after_header && outcome.retryAfterMs !== null) {
      // The provider said when to come back; past our bound the failure is returned as it is.
      if (outcome.retryAfterMs > MAX_RETRY_AFTER_MS) return { outcome, leaf, attempts };
      wait = outcome.retryAfterMs;
    }
    if (outcome.ok) hooks.discard(outcome.response);
    await hooks.sleep(wait);
    if (hooks.cancelled())
      return {
        outcome: { ok: false, error: new AppError('CLIENT_CLOSED_REQUEST', 'The client closed the request.') },
        leaf,
        attempts,
      };
  }
}

function withGuardrailNode(settings: LeafSettings, node: ConfigTarget): LeafSettings {
  if (!GUARDRAIL_FIELDS.some((field) => (node[field]?.length ?? 0) > 0)) return settings;
  return { ...settings, guardrailNodes: [...settings.guardrailNodes, node] };
}

function inherit(parent: LeafSettings, node: ConfigTarget): LeafSettings {
  const overrides = node.override_params;
  if (
    !overrides &&
    !node.retry &&
    node.request_timeout === undefined &&
    node.anthropic_beta === undefined &&
    node.azure_entra_scope === undefined
  )
    return parent;
  return {
    overrideParams: overrides ? { ...parent.overrideParams, ...overrides } : parent.overrideParams,
    retry: node.retry ?? parent.retry,
    requestTimeoutMs: node.request_timeout ?? parent.requestTimeoutMs,
    anthropicBeta: node.anthropic_beta ?? parent.anthropicBeta,
    azureEntraScope: node.azure_entra_scope ?? parent.azureEntraScope,
    guardrailNodes: parent.guardrailNodes,
  };
}

function pickWeighted(targets: readonly ConfigTarget[], random: () => number): number {
  let total = 0;
  for (const target of targets) total += target.weight ?? 1;
  let point = random() * total;
  for (let i = 0; i < targets.length; i++) {
    const weight = targets[i]!.weight ?? 1;
    if (weight <= 0) continue;
    if (point < weight) return i;
    point -= weight;
  }
  // Rounding at the very top of the range: the last target with a weight.
  for (let i = targets.length - 1; i >= 0; i--) if ((targets[i]!.weight ?? 1) > 0) return i;
  return 0;
}
