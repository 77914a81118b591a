import { isSecretField, redactSecrets } from '../../lib/redact.js';
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

/**
 * Configuration fields that hold secrets: the names lib/redact treats as secret (`*_key`,
 * `*_token`, `*_secret`, `password`, … in any free-form field too), plus headers (they often carry auth).
 */
export const isSecretConfigField = (name: string): boolean => name === 'custom_headers' || isSecretField(name);

const isSealedField = (value: unknown): value is SealedField =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  typeof (value as SealedField).$sealed === 'string';

function hintOf(value: unknown): unknown {
  if (typeof value === 'string') return maskSecret(value);
  if (typeof value === 'object' && value !== null && !Array.isArray(value))
    return Object.fromEntries(Object.keys(value).map((name) => [name, '****']));
  return '****';
}

/** A stored secret field still in clear (written before its name counted as secret). */
const isClearSecret = (name: string, value: unknown): boolean =>
  isSecretConfigField(name) && value !== null && value !== undefined && !isSealedField(value);

const seal = (box: SecretBox, value: unknown): SealedField => ({
  $sealed: box.encrypt(JSON.stringify(value)),
  hint: hintOf(value),
});
const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

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
    if (isSealedField(before) && sameJson(before.hint, value)) out[name] = before;
    else if (isClearSecret(name, before) && sameJson(hintOf(before), value)) out[name] = seal(box, before);
    else out[name] = seal(box, value);
  }
  return JSON.stringify(out);
}

/**
 * The stored configurations with every secret field encrypted, or null when they already are.
 * Rows written before a field's name counted as secret hold it in clear; the server seals them
 * when it starts (see seal-stored.ts).
 */
export function sealClearSecrets(box: SecretBox, stored: string): string | null {
  const config = JSON.parse(stored) as Record<string, unknown>;
  let changed = false;
  for (const [name, value] of Object.entries(config)) {
    if (!isClearSecret(name, value)) continue;
    config[name] = seal(box, value);
    changed = true;
  }
  return changed ? JSON.stringify(config) : null;
}

/** The configurations as the gateway needs them: secret fields decrypted. */
export function openConfigurations(box: SecretBox, stored: string): Record<string, unknown> {
  const config = JSON.parse(stored) as Record<string, unknown>;
  for (const [name, value] of Object.entries(config)) {
    if (isSealedField(value)) config[name] = JSON.parse(box.decrypt(value.$sealed)) as unknown;
  }
  return config;
}

/**
 * The configurations as people see them: secret fields replaced by their masks, those still in
 * clear included, and secret-looking names nested anywhere else redacted.
 */
export function maskConfigurations(stored: string): Record<string, unknown> {
  const config = JSON.parse(stored) as Record<string, unknown>;
  for (const [name, value] of Object.entries(config)) {
    if (isSealedField(value)) config[name] = value.hint;
    else if (isClearSecret(name, value)) config[name] = hintOf(value);
    else if (typeof value === 'object' && value !== null) config[name] = redactSecrets(value);
  }
  return config;
}

/** The encrypted key and its mask, for a key given in a request (null clears both). */
export function sealKey(box: SecretBox, key: string | null): { encrypted_key: string | null; key_hint: string | null } {
  return key === null
    ? { encrypted_key: null, key_hint: null }
    : { encrypted_key: box.encrypt(key), key_hint: maskSecret(key) };
}
