import { envName, type Config } from '../config/schema.js';
import { AppError } from '../lib/errors.js';

/**
 * The spec's private-deployment feature flags, each read from its own setting. Routes name the
 * features they belong to (`config.feature`); the checks behind a feature (audit records,
 * budgets, policies) ask the same flags, so that OFF turns a feature off everywhere at once.
 */
export const FEATURES = {
  guardrails: { setting: 'guardrails_enabled', label: 'guardrails' },
  api_access: { setting: 'api_access_enabled', label: 'administration API' },
  data_exports: { setting: 'data_exports_enabled', label: 'data exports' },
  usage_limits: { setting: 'usage_limits_enabled', label: 'usage limits' },
  audit_logs: { setting: 'audit_logs_enabled', label: 'audit logs' },
  scim: { setting: 'scim_enabled', label: 'SCIM provisioning' },
  policy: { setting: 'policy_enabled', label: 'rate-limits and usage-limits policies' },
} as const satisfies Record<string, { setting: keyof Config; label: string }>;

export type Feature = keyof typeof FEATURES;

export const ALL_FEATURES = Object.keys(FEATURES) as Feature[];

/** The environment variable that turns a feature off (`AUDIT_LOGS_ENABLED`). */
export const featureVariable = (feature: Feature): string => envName(FEATURES[feature].setting);

export interface FeatureFlags {
  enabled(feature: Feature): boolean;
  /** The first of `features` that is off, or null when all are on. */
  firstDisabled(features: readonly Feature[]): Feature | null;
}

export function createFeatureFlags(config: Pick<Config, (typeof FEATURES)[Feature]['setting']>): FeatureFlags {
  const on = new Map(ALL_FEATURES.map((feature) => [feature, config[FEATURES[feature].setting] !== false]));
  const enabled = (feature: Feature) => on.get(feature) ?? true;
  return {
    enabled,
    firstDisabled: (features) => features.find((feature) => !enabled(feature)) ?? null,
  };
}

/** Every feature on: for tests and tools that build parts of the server without a config. */
export const ALL_ENABLED: FeatureFlags = { enabled: () => true, firstDisabled: () => null };

export function featureDisabledError(feature: Feature): AppError {
  return new AppError(
    'FEATURE_DISABLED',
    `The ${FEATURES[feature].label} feature (${feature}) is turned off on this deployment (${featureVariable(feature)}=OFF).`,
  );
}
