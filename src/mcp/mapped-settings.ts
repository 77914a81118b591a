import type { CachedSecret, SecretCache } from '../secrets/secret-cache.js';
import { formatSecret, pickSecret } from '../secrets/secret-value.js';
import { SecretManagerError, type SecretTarget } from '../secrets/types.js';
import type { McpConnectionSettings, McpMappedField, MappedSettings } from './types.js';

export type { McpMappedField, MappedSettings };

/** The `target_field`s an MCP integration may map to a secret reference (docs/mcp.md). */
export const MCP_SECRET_TARGETS =
  'configurations.client_id, configurations.client_secret, configurations.custom_headers (a JSON object; value_format json) or configurations.custom_headers.<Header-Name>';

const HEADER_TARGET = /^configurations\.custom_headers\.([A-Za-z0-9!#$%&'*+.^_`|~-]{1,128})$/;

export function isMcpSecretTarget(field: string): boolean {
  return (
    field === 'configurations.client_id' ||
    field === 'configurations.client_secret' ||
    field === 'configurations.custom_headers' ||
    HEADER_TARGET.test(field)
  );
}

function apply(base: McpConnectionSettings, field: McpMappedField, value: unknown): McpConnectionSettings {
  const setting = field.targetField.slice('configurations.'.length);
  if (setting === 'client_id' || setting === 'client_secret') {
    if (typeof value !== 'string' || value.trim() === '' || /[\r\n\0]/.test(value.trim()))
      throw new SecretManagerError('invalid', `the ${field.where} is not one line of text.`);
    return { ...base, [setting]: value.trim() };
  }
  if (setting === 'custom_headers') {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new SecretManagerError('invalid', `the ${field.where} is not a JSON object of headers.`);
    const headers: Record<string, string> = { ...base.custom_headers };
    for (const [name, text] of Object.entries(value)) headers[name] = headerValue(text, field);
    return { ...base, custom_headers: headers };
  }
  const name = setting.slice('custom_headers.'.length);
  return { ...base, custom_headers: { ...base.custom_headers, [name]: headerValue(value, field) } };
}

function headerValue(value: unknown, field: McpMappedField): string {
  // A trailing newline (a file written by hand) is not part of the value; other control characters refuse it.
  const text = typeof value === 'string' ? value.trim() : '';
  // eslint-disable-next-line no-control-regex
  if (text === '' || /[\u0000-\u001f\u007f]/.test(text))
    throw new SecretManagerError(
      'invalid',
      `the ${field.where} is not usable as a header value (empty or with control characters).`,
    );
  return text;
}

export function createMappedSettings(
  base: McpConnectionSettings,
  fields: readonly McpMappedField[],
  cache: SecretCache,
): MappedSettings {
  let seen: readonly CachedSecret[] | null = null;

  const targetOf = (field: McpMappedField): SecretTarget => {
    if (!field.target)
      throw new SecretManagerError(
        'not_found',
        `the ${field.where} is mapped to a secret reference that has been deleted; map it again.`,
      );
    return field.target;
  };

  function build(secrets: readonly CachedSecret[]): McpConnectionSettings {
    let settings = base;
    fields.forEach((field, index) => {
      const picked = pickSecret(secrets[index]!.value, field.secretKey, field.where);
      settings = apply(settings, field, formatSecret(picked, field.format, field.where));
    });
    return settings;
  }

  return {
    fields,
    async current() {
      const secrets = await Promise.all(fields.map((field) => cache.get(targetOf(field))));
      seen = secrets;
      return build(secrets);
    },
    async refresh() {
      const known = seen;
      if (!known) return false;
      const secrets = await Promise.all(fields.map((field, index) => cache.refresh(targetOf(field), known[index]!)));
      if (secrets.every((secret, index) => secret === known[index])) return false;
      seen = secrets;
      return JSON.stringify(build(secrets)) !== JSON.stringify(build(known));
    },
    forbiddenIn(workspaceId) {
      const field = fields.find((f) => f.allowedWorkspaces !== null && !f.allowedWorkspaces.includes(workspaceId));
      return field
        ? `The ${field.where} does not allow this workspace (see the reference's allowed_workspaces).`
        : null;
    },
  };
}
