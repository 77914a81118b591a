/**
 * Field names whose values are secrets wherever they appear. Anything stored for people to
 * read later (audit records, logs) passes through `redactSecrets` first. A bare `key` is not
 * here because it also names ordinary fields (a condition's key); routes whose bodies carry a
 * secret under such a name list it as an extra field.
 */
const SECRET_FIELD = /(^|_|-)(api_?key|secret|secret_access_key|password|token|authorization|credentials?|private_key|service_account_json)$/i;
export const REDACTED = '[REDACTED]';

export function isSecretField(name: string, extra: readonly string[] = []): boolean {
  return SECRET_FIELD.test(name) || extra.includes(name);
}

export function redactSecrets(value: unknown, extra: readonly string[] = [], depth = 0): unknown {
  if (depth > 20 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item, extra, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [name, inner] of Object.entries(value)) {
    out[name] = isSecretField(name, extra) && inner !== null && inner !== undefined ? REDACTED : redactSecrets(inner, extra, depth + 1);
  }
  return out;
}
