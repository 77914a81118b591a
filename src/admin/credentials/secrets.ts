import { isSecretField } from '../../lib/redact.js';
import type { SecretBox } from '../../lib/secret-box.js';

/**
 * How a provider key is shown after it is stored: the first and last four characters of a
 * long key (`sk-p****abcd`), nothing of a short one, where four plus four would be too much.
 */
export function maskSecret(raw: string): string {
  return raw.length >= 16 ? `${raw.slice(0, 4)}****${raw.slice(-4)}` : '****';
}

/** A configuration field stored encrypted, with what may be shown of it. */
interface SealedField {
  $sealed: string;
  hint: unknown;
}

/** Configuration fields that hold secrets: the names lib/redact treats as secret, plus headers (they often carry auth). */
export const isSecretConfigField = (name: string): boolean => name === 'custom_headers' || isSecretField(name);

const isSealedField = (value: unknown): value is SealedField =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as SealedField).$sealed === 'string';

function hintOf(value: unknown): unknown {
  if (typeof value === 'string') return maskSecret(value);
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return Object.fromEntries(Object.keys(value).map((name) => [name, '****']));
  return '****';
}

/**
 * The stored JSON of a configurations object: secret fields are encrypted one by one. A secret
 * field sent back exactly as it was shown (its mask) keeps its stored value, so that a client
 * may GET, change another field and PUT the object back.
 */
export function sealConfigurations(box: SecretBox, config: Record<string, unknown>, previousStored?: string): string {
  const previous = previousStored ? (JSON.parse(previousStored) as Record<string, unknown>) : {};
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(config)) {
    if (value === undefined) continue;
    if (!isSecretConfigField(name) || value === null) {
      out[name] = value;
      continue;
    }
    const before = previous[name];
    out[name] = isSealedField(before) && JSON.stringify(before.hint) === JSON.stringify(value)
      ? before
      : ({ $sealed: box.encrypt(JSON.stringify(value)), hint: hintOf(value) } satisfies SealedField);
  }
  return JSON.stringify(out);
}

/** The configurations as the gateway needs them: secret fields decrypted. */
export function openConfigurations(box: SecretBox, stored: string): Record<string, unknown> {
  const config = JSON.parse(stored) as Record<string, unknown>;
  for (const [name, value] of Object.entries(config)) {
    if (isSealedField(value)) config[name] = JSON.parse(box.decrypt(value.$sealed)) as unknown;
  }
  return config;
}

/** The configurations as people see them: secret fields replaced by their masks. */
export function maskConfigurations(stored: string): Record<string, unknown> {
  const config = JSON.parse(stored) as Record<string, unknown>;
  for (const [name, value] of Object.entries(config)) {
    if (isSealedField(value)) config[name] = value.hint;
  }
  return config;
}

/** The encrypted key and its mask, for a key given in a request (null clears both). */
export function sealKey(box: SecretBox, key: string | null): { encrypted_key: string | null; key_hint: string | null } {
  return key === null ? { encrypted_key: null, key_hint: null } : { encrypted_key: box.encrypt(key), key_hint: maskSecret(key) };
}
