import type { ValueFormat } from './secret-value.js';

/**
 * One field of an integration or virtual key read from a secret manager, as stored:
 * `target_field` is `key` (the provider key) or `configurations.<setting>`; the reference is
 * kept by id; `secret_key` (else the reference's own) names a key of a JSON secret.
 */
export interface StoredSecretMapping {
  target_field: string;
  secret_reference_id: string;
  secret_key: string | null;
  value_format: ValueFormat | null;
}

export const parseMappings = (stored: string): StoredSecretMapping[] => JSON.parse(stored) as StoredSecretMapping[];

/** The configuration setting a target field names, or null for the provider key. */
export function settingOf(targetField: string): string | null {
  return targetField === 'key' ? null : targetField.slice('configurations.'.length);
}
