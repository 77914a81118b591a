import { SecretManagerError, type SecretValue } from './types.js';

/** How a mapped value reaches its field: as text (the default), or parsed from JSON (`custom_headers`, say). */
export type ValueFormat = 'string' | 'json';

function fieldsOf(raw: SecretValue, where: string): Readonly<Record<string, unknown>> {
  if (typeof raw !== 'string') return raw;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new SecretManagerError('invalid', `${where} is not a JSON object, so it has no keys; leave secret_key out.`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new SecretManagerError('invalid', `${where} is not a JSON object, so it has no keys; leave secret_key out.`);
  return parsed as Record<string, unknown>;
}

/**
 * The part of a secret a mapping names. With a key: that field of a JSON secret (or of a Vault
 * entry). Without: the whole text, or the only field of an entry that has one. Field names
 * appear in messages; values never do.
 */
export function pickSecret(raw: SecretValue, key: string | null, where: string): unknown {
  if (key !== null) {
    const fields = fieldsOf(raw, where);
    if (!Object.hasOwn(fields, key))
      throw new SecretManagerError(
        'not_found',
        `${where} has no key ${key} (it has: ${Object.keys(fields).join(', ')}).`,
      );
    return fields[key];
  }
  if (typeof raw === 'string') return raw;
  const names = Object.keys(raw);
  if (names.length === 1) return raw[names[0]!];
  throw new SecretManagerError('invalid', `${where} holds several keys (${names.join(', ')}); name one in secret_key.`);
}

/** A picked value in the form its field takes. */
export function formatSecret(value: unknown, format: ValueFormat, where: string): unknown {
  if (format === 'json') {
    if (typeof value !== 'string') return value;
    try {
      return JSON.parse(value) as unknown;
    } catch {
      throw new SecretManagerError('invalid', `${where} is not valid JSON (value_format is json).`);
    }
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The value to write so that `key` of the secret becomes `text`: the other keys of the current
 * value are kept. Without a key, the whole secret becomes `text` (a Vault entry keeps its only
 * field's name, else `value`).
 */
export function withSecret(current: SecretValue | null, key: string | null, text: string, where: string): SecretValue {
  if (key === null) {
    if (current === null || typeof current === 'string') return text;
    const names = Object.keys(current);
    if (names.length > 1)
      throw new SecretManagerError(
        'invalid',
        `${where} holds several keys (${names.join(', ')}); name one in secret_key.`,
      );
    return { [names[0] ?? 'value']: text };
  }
  const fields = current === null ? {} : fieldsOf(current, where);
  const merged = { ...fields, [key]: text };
  return typeof current === 'string' || current === null ? JSON.stringify(merged) : merged;
}
