import { AppError } from '../../lib/errors.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { parseMappings, settingOf } from '../../secrets/mappings.js';
import type { CachedSecret, SecretCache } from '../../secrets/secret-cache.js';
import { formatSecret, pickSecret, type ValueFormat } from '../../secrets/secret-value.js';
import { allowsWorkspace, targetOf } from '../../secrets/target.js';
import { SecretManagerError, type SecretTarget } from '../../secrets/types.js';
import type { SecretReferenceRepository } from '../../storage/repositories/secret-references.js';
import type { Logger } from '../../telemetry/logger.js';
import type { ResolvedCredential } from '../../gateway/credential-lookup.js';
import { configurationsSchema } from './schemas.js';

/** One field of a credential read from a secret manager: where, and how to take it from the secret. */
export interface MappedField {
  /** The configuration setting, or null for the provider key. */
  setting: string | null;
  target: SecretTarget;
  secretKey: string | null;
  format: ValueFormat;
  /** For messages: `key of @my-openai (secret reference openai-prod)`. */
  where: string;
}

/** A credential as loaded from the database, before its mapped fields are read. */
export interface LoadedCredential {
  base: ResolvedCredential;
  fields: readonly MappedField[];
  /** The last credential built with the secrets it was built from, reused while they are unchanged. */
  built?: { secrets: readonly CachedSecret[]; value: ResolvedCredential };
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Fields of integrations and virtual keys whose values live in a secret manager
 * (`secret_mappings`): loaded with the credential (the workspace must be in each reference's
 * allowed list), read through the secret cache on each use, and read again when a provider
 * refuses the credential. Values are never logged; failures are, with the reference's slug.
 */
export function createSecretFields(deps: {
  references: SecretReferenceRepository;
  secretBox: SecretBox;
  cache: SecretCache;
  logger?: Logger | undefined;
}) {
  const credentialsOf = new WeakMap<
    ResolvedCredential,
    { loaded: LoadedCredential; secrets: readonly CachedSecret[] }
  >();

  function fail(error: unknown, field: MappedField, param: string): never {
    if (error instanceof AppError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    deps.logger?.warn(
      {
        secret_reference: field.target.slug,
        kind: error instanceof SecretManagerError ? error.kind : 'failed',
        reason: message,
      },
      'a secret reference could not be read',
    );
    throw new AppError('SECRET_MANAGER_ERROR', `Could not read the ${field.where}: ${message}`, { param });
  }

  function build(loaded: LoadedCredential, secrets: readonly CachedSecret[], param: string): ResolvedCredential {
    let apiKey = loaded.base.apiKey;
    const configurations: Record<string, unknown> = { ...loaded.base.configurations };
    loaded.fields.forEach((field, index) => {
      let value: unknown;
      try {
        value = formatSecret(
          pickSecret(secrets[index]!.value, field.secretKey, field.where),
          field.format,
          field.where,
        );
      } catch (error) {
        fail(error, field, param);
      }
      if (field.setting !== null) {
        configurations[field.setting] = value;
        return;
      }
      const key = typeof value === 'string' ? value.trim() : '';
      if (key === '' || CONTROL.test(key))
        fail(
          new SecretManagerError(
            'invalid',
            `the value read is not usable as a provider key (empty, not text, or with control characters).`,
          ),
          field,
          param,
        );
      apiKey = key;
    });
    if (loaded.fields.some((field) => field.setting !== null)) {
      const checked = configurationsSchema.safeParse(configurations);
      if (!checked.success) {
        const issue = checked.error.issues[0]!;
        const field = loaded.fields.find((f) => f.setting === String(issue.path[0])) ?? loaded.fields[0]!;
        fail(
          new SecretManagerError('invalid', `configurations.${issue.path.join('.')} ${issue.message}.`),
          field,
          param,
        );
      }
    }
    const value = Object.freeze({
      ...loaded.base,
      apiKey,
      customHost: typeof configurations.custom_host === 'string' ? configurations.custom_host : null,
      configurations: Object.freeze(configurations),
    });
    credentialsOf.set(value, { loaded, secrets });
    return value;
  }

  async function read(field: MappedField, param: string): Promise<CachedSecret> {
    try {
      return await deps.cache.get(field.target);
    } catch (error) {
      return fail(error, field, param);
    }
  }

  return {
    /**
     * The mapped fields of a stored credential, for use in `workspaceId`. A reference that does
     * not allow the workspace is refused (403); a deleted one is a provider setting error.
     */
    async load(
      organisationId: string,
      workspaceId: string,
      storedMappings: string,
      what: string,
      param: string,
    ): Promise<MappedField[]> {
      const mappings = parseMappings(storedMappings);
      if (mappings.length === 0) return [];
      const rows = await deps.references.findActiveByIds(
        organisationId,
        mappings.map((m) => m.secret_reference_id),
      );
      return mappings.map((mapping) => {
        const row = rows.find((r) => r.id === mapping.secret_reference_id);
        const field = mapping.target_field;
        if (!row)
          throw new AppError(
            'PROVIDER_CONFIG',
            `The ${field} of ${what} is mapped to a secret reference that has been deleted; map it again.`,
            { param },
          );
        if (!allowsWorkspace(row, workspaceId))
          throw new AppError(
            'SECRET_REFERENCE_FORBIDDEN',
            `The ${field} of ${what} is read from secret reference ${row.slug}, which does not allow this workspace (see its allowed_workspaces).`,
            { param },
          );
        return {
          setting: settingOf(field),
          target: targetOf(row, deps.secretBox),
          secretKey: mapping.secret_key ?? row.secret_key,
          format: mapping.value_format ?? 'string',
          where: `${field} of ${what} (secret reference ${row.slug})`,
        };
      });
    },

    /** The credential with its mapped fields as the secret cache has them now. */
    async apply(loaded: LoadedCredential, param: string): Promise<ResolvedCredential> {
      if (loaded.fields.length === 0) return loaded.base;
      const secrets = await Promise.all(loaded.fields.map((field) => read(field, param)));
      const built = loaded.built;
      if (built && built.secrets.every((secret, index) => secret === secrets[index])) return built.value;
      const value = build(loaded, secrets, param);
      loaded.built = { secrets, value };
      return value;
    },

    /**
     * After a provider refused `credential`: its mapped fields read again (see
     * SecretCache.refresh), or null when no value changed, so that retrying would not help.
     */
    async refresh(credential: ResolvedCredential, param: string): Promise<ResolvedCredential | null> {
      const known = credentialsOf.get(credential);
      if (!known) return null;
      const secrets = await Promise.all(
        known.loaded.fields.map(async (field, index) => {
          try {
            return await deps.cache.refresh(field.target, known.secrets[index]!);
          } catch (error) {
            return fail(error, field, param);
          }
        }),
      );
      if (secrets.every((secret, index) => secret === known.secrets[index])) return null;
      const value = build(known.loaded, secrets, param);
      if (
        value.apiKey === credential.apiKey &&
        JSON.stringify(value.configurations) === JSON.stringify(credential.configurations)
      )
        return null;
      known.loaded.built = { secrets, value };
      return value;
    },
  };
}

export type SecretFields = ReturnType<typeof createSecretFields>;
