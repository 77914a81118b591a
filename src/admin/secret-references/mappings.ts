import { z } from 'zod';
import type { Principal } from '../../auth/principal.js';
import { AppError, invalid } from '../../lib/errors.js';
import { parseMappings, type StoredSecretMapping } from '../../secrets/mappings.js';
import { allowsWorkspace } from '../../secrets/target.js';
import type { SecretReferenceRepository, SecretReferenceRow } from '../../storage/repositories/secret-references.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import { KNOWN_CONFIGURATION_FIELDS } from '../credentials/schemas.js';
import { idOrSlug } from '../shared/pagination.js';

const valueFormat = z
  .enum(['string', 'json'])
  .describe('string (the default): the text as it is; json: parsed, for settings that are objects (custom_headers).');

/** `secret_mappings` as bodies send it (the reference gateway's SecretMapping). */
export const secretMappingsField = z
  .array(
    z
      .object({
        target_field: z
          .string()
          .min(1)
          .max(160)
          .describe('key (the provider key) or configurations.<setting> (configurations.azure_client_secret, …).'),
        secret_reference_id: idOrSlug.describe('The secret reference, by id or slug.'),
        secret_key: z
          .string()
          .min(1)
          .max(256)
          .nullable()
          .optional()
          .describe("A key of a JSON secret (a Vault entry's field); without it the reference's own secret_key."),
        value_format: valueFormat.nullable().optional(),
      })
      .strict(),
  )
  .max(20)
  .describe(
    'Fields read from a secret manager when the gateway needs them (cached for secret_cache_ttl_ms, read again when the provider answers 401) instead of stored here. A mapped field wins over a stored one.',
  );

/** `secret_mappings` as objects show it: the reference by id. */
export const storedMappingsObject = z.array(
  z.object({
    target_field: z.string(),
    secret_reference_id: z.uuid(),
    secret_key: z.string().nullable(),
    value_format: valueFormat.nullable(),
  }),
);

export type SecretMappingsInput = z.infer<typeof secretMappingsField>;

/** The stored mappings as objects show them. */
export const mappingsOf = (stored: string): StoredSecretMapping[] => parseMappings(stored);

const KNOWN_SETTINGS: ReadonlySet<string> = new Set(KNOWN_CONFIGURATION_FIELDS);

/** Which `target_field`s a kind of credential takes, and the message that lists them. */
export interface MappingTargets {
  accepts(field: string): boolean;
  message: string;
}

/** Provider credentials (integrations, virtual keys): the key, or a known configuration setting. */
const PROVIDER_TARGETS: MappingTargets = {
  accepts: (field) =>
    field === 'key' ||
    (field.startsWith('configurations.') && KNOWN_SETTINGS.has(field.slice('configurations.'.length))),
  message: `target_field must be key or configurations.<setting>, one of: ${KNOWN_CONFIGURATION_FIELDS.join(', ')}.`,
};

/**
 * The rules every credential with `secret_mappings` follows when it is written: each mapping
 * names a known field once, an active reference of the organisation, and every workspace that
 * will use the credential is in the reference's allowed list. A reference that an API key's
 * rotation writes to cannot also feed a provider key (the rotation would overwrite it).
 */
export function createSecretMappingRules(deps: {
  references: SecretReferenceRepository;
  workspaces: WorkspaceRepository;
}) {
  async function forbidden(principal: Principal, row: SecretReferenceRow, workspaceId: string, param: string) {
    const workspace = await deps.workspaces.findByIdOrSlug(principal.organisationId, workspaceId);
    return new AppError(
      'SECRET_REFERENCE_FORBIDDEN',
      `Secret reference ${row.slug} does not allow workspace ${workspace?.slug ?? workspaceId} (see its allowed_workspaces).`,
      { param },
    );
  }

  return {
    /**
     * The stored JSON of mappings given in a body, after the rules above. `workspaceIds`: every
     * workspace that will use the credential (a virtual key's; an integration's providers').
     */
    async store(
      principal: Principal,
      input: SecretMappingsInput,
      workspaceIds: readonly string[],
      param = 'secret_mappings',
      targets: MappingTargets = PROVIDER_TARGETS,
    ): Promise<string> {
      const stored: StoredSecretMapping[] = [];
      for (const [index, mapping] of input.entries()) {
        const at = `${param}[${index}]`;
        const field = mapping.target_field;
        if (!targets.accepts(field)) throw invalid(`${at}.target_field`, targets.message);
        if (stored.some((m) => m.target_field === field))
          throw invalid(`${at}.target_field`, `target_field ${field} is mapped twice.`);
        const row = await deps.references.findByIdOrSlug(principal.organisationId, mapping.secret_reference_id);
        if (!row || row.status !== 'active')
          throw new AppError('NOT_FOUND', `Secret reference ${mapping.secret_reference_id} not found (or deleted).`, {
            param: `${at}.secret_reference_id`,
          });
        for (const workspaceId of workspaceIds)
          if (!allowsWorkspace(row, workspaceId))
            throw await forbidden(principal, row, workspaceId, `${at}.secret_reference_id`);
        const rotation = (await deps.references.findUses(principal.organisationId, row.id)).find(
          (use) => use.kind === 'api_key',
        );
        if (rotation)
          throw invalid(
            `${at}.secret_reference_id`,
            `Secret reference ${row.slug} receives the new secret of API key "${rotation.slug}" on each rotation; a provider credential cannot be read from it.`,
          );
        stored.push({
          target_field: field,
          secret_reference_id: row.id,
          secret_key: mapping.secret_key ?? null,
          value_format: mapping.value_format ?? null,
        });
      }
      return JSON.stringify(stored);
    },

    /** Refuses to use stored mappings in a workspace one of their references does not allow (a new provider of an integration). */
    async assertUsableIn(principal: Principal, stored: string, workspaceId: string, param: string): Promise<void> {
      const ids = parseMappings(stored).map((m) => m.secret_reference_id);
      for (const row of await deps.references.findActiveByIds(principal.organisationId, ids))
        if (!allowsWorkspace(row, workspaceId)) throw await forbidden(principal, row, workspaceId, param);
    },

    /** The workspaces an integration's mappings must allow: those of its active providers. */
    workspacesOfIntegration: (integrationId: string) => deps.references.providerWorkspaces(integrationId),

    /** Whether the mappings give the provider key (so that no stored key is needed). */
    mapsKey: (input: SecretMappingsInput | undefined) => input?.some((m) => m.target_field === 'key') ?? false,
  };
}

export type SecretMappingRules = ReturnType<typeof createSecretMappingRules>;
