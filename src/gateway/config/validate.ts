import type { z } from 'zod';
import { getProvider } from '../../providers/registry.js';
import { MAX_TARGET_DEPTH, nodeSchema, type ConfigTarget, type GatewayConfig } from './schema.js';

export type ConfigPath = Array<string | number>;

/** One problem of a config, with its JSON path (`targets[1].weight`; `''` for the whole config). */
export interface ConfigIssue {
  path: string;
  message: string;
}

export type ParseConfigResult = { ok: true; config: GatewayConfig } | { ok: false; issues: ConfigIssue[] };

const CREDENTIAL_FIELDS = ['provider', 'virtual_key', 'api_key', 'custom_host'] as const;
const STORED_PROVIDER = /^@[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$/;

/** `['targets', 1, 'weight']` → `targets[1].weight`, the way clients name fields. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  return path.map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`)).join('');
}

/**
 * Validates a gateway config object and lists every problem with its path, so that one failed
 * save shows the author all of it. The gateway router uses the same function on stored configs.
 */
export function parseGatewayConfig(value: unknown): ParseConfigResult {
  const issues: ConfigIssue[] = [];
  const config = checkNode(value, [], 0, issues);
  if (issues.length > 0 || !config) return { ok: false, issues: issues.length > 0 ? issues : [{ path: '', message: 'invalid config' }] };
  return { ok: true, config };
}

function checkNode(value: unknown, path: ConfigPath, depth: number, issues: ConfigIssue[]): ConfigTarget | undefined {
  const add = (sub: ConfigPath, message: string) => issues.push({ path: formatPath([...path, ...sub]), message });
  const parsed = nodeSchema.safeParse(value);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) addZodIssue(issue, path, issues);
  } else {
    checkRules(parsed.data, path.length === 0, add);
  }

  const rawTargets = isObject(value) && Array.isArray(value['targets']) ? (value['targets'] as unknown[]) : undefined;
  if (!rawTargets) return parsed.success ? (parsed.data as ConfigTarget) : undefined;
  if (depth + 1 > MAX_TARGET_DEPTH) {
    add(['targets'], `targets nest at most ${MAX_TARGET_DEPTH} levels deep`);
    return undefined;
  }
  const targets = rawTargets.map((target, i) => checkNode(target, [...path, 'targets', i], depth + 1, issues));
  if (!parsed.success || targets.some((t) => t === undefined)) return undefined;
  return { ...parsed.data, targets: targets as ConfigTarget[] };
}

function addZodIssue(issue: z.core.$ZodIssue, base: ConfigPath, issues: ConfigIssue[]): void {
  const path = [...base, ...(issue.path as ConfigPath)];
  if (issue.code === 'unrecognized_keys') {
    for (const key of issue.keys) issues.push({ path: formatPath([...path, key]), message: `unknown key "${key}"` });
    return;
  }
  issues.push({ path: formatPath(path), message: issue.message });
}

type NodeData = z.infer<typeof nodeSchema>;

/** Rules across fields of one node: strategy against targets, credentials of leaves. */
function checkRules(node: NodeData, isRoot: boolean, add: (path: ConfigPath, message: string) => void): void {
  const { strategy, targets } = node;
  if (!isRoot && node.cache !== undefined) add(['cache'], 'cache applies to the whole request: set it at the top level of the config');
  if (targets !== undefined) {
    if (!strategy) add(['strategy'], 'a node with targets needs a strategy');
    for (const field of CREDENTIAL_FIELDS) {
      if (node[field] !== undefined) add([field], `a node with targets cannot carry ${field}; put it on its targets`);
    }
  }
  if (strategy) {
    const count = targets?.length ?? 0;
    if (strategy.mode === 'single') {
      if (targets !== undefined && count !== 1) add(['targets'], 'strategy mode single takes exactly one target');
    } else if (count === 0) {
      add(['targets'], `strategy mode ${strategy.mode} needs at least one target`);
    }
    checkTargetNames(node, add);
    if (strategy.mode === 'loadbalance' && count > 0) {
      const weights = (targets ?? []).map((t) => (isObject(t) && typeof t['weight'] === 'number' ? t['weight'] : 1));
      if (weights.every((w) => w === 0)) add(['targets'], 'loadbalance needs at least one target with a weight above 0');
    }
    if (strategy.mode === 'conditional') {
      if (!strategy.conditions || strategy.conditions.length === 0) add(['strategy', 'conditions'], 'strategy mode conditional needs at least one condition');
      if (strategy.default === undefined) add(['strategy', 'default'], 'strategy mode conditional needs a default target name');
    } else {
      if (strategy.conditions !== undefined) add(['strategy', 'conditions'], 'conditions apply only to strategy mode conditional');
      if (strategy.default !== undefined) add(['strategy', 'default'], 'default applies only to strategy mode conditional');
    }
  }
  if (targets === undefined) {
    const hasCredential = CREDENTIAL_FIELDS.some((field) => node[field] !== undefined);
    // The root may be settings only (retry, cache, …): the provider then comes from the request headers.
    if (!isRoot || hasCredential) checkCredentials(node, add);
  }
}

/** Conditional routing names targets: names must be unique and every reference must exist. */
function checkTargetNames(node: NodeData, add: (path: ConfigPath, message: string) => void): void {
  const names = new Set<string>();
  (node.targets ?? []).forEach((target, i) => {
    const name = isObject(target) && typeof target['name'] === 'string' ? target['name'] : undefined;
    if (name === undefined) return;
    if (names.has(name)) add(['targets', i, 'name'], `target name "${name}" is used twice`);
    names.add(name);
  });
  const strategy = node.strategy;
  if (strategy?.mode !== 'conditional') return;
  strategy.conditions?.forEach((condition, i) => {
    if (!names.has(condition.then)) add(['strategy', 'conditions', i, 'then'], `no target is named "${condition.then}"`);
  });
  if (strategy.default !== undefined && !names.has(strategy.default)) add(['strategy', 'default'], `no target is named "${strategy.default}"`);
}

/**
 * A leaf reaches a provider in one of four ways: a stored provider (`@slug`), a virtual key,
 * a provider name with an `api_key` (or the request's Authorization), or a provider name with a
 * `custom_host`.
 */
function checkCredentials(node: NodeData, add: (path: ConfigPath, message: string) => void): void {
  const { provider, virtual_key: virtualKey, api_key: apiKey, custom_host: customHost } = node;
  if (provider === undefined && virtualKey === undefined) {
    add(['provider'], 'a target names a provider: provider ("@slug" or a provider name) or virtual_key');
    return;
  }
  const stored = provider?.startsWith('@') ?? false;
  if (provider !== undefined) {
    if (stored && !STORED_PROVIDER.test(provider)) add(['provider'], `"${provider}" is not a valid stored provider slug`);
    if (!stored && !getProvider(provider)) add(['provider'], `unknown provider "${provider}"`);
  }
  if (stored && virtualKey !== undefined) add(['virtual_key'], 'a stored provider (@slug) cannot be combined with virtual_key');
  if (apiKey !== undefined) {
    if (virtualKey !== undefined) add(['api_key'], 'virtual_key already carries the key; drop api_key');
    else if (provider === undefined || stored) add(['api_key'], 'api_key needs a provider name (not a stored @slug)');
  }
  if (customHost !== undefined && (provider === undefined || stored)) add(['custom_host'], 'custom_host needs a provider name (not a stored @slug)');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
