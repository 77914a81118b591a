import { X509Certificate } from 'node:crypto';
import type { OidcProviderSettings } from '../../auth/sso/oidc.js';
import { normaliseCertificate, type SamlProviderSettings } from '../../auth/sso/saml.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid } from '../../lib/errors.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { SsoRepository } from '../../storage/repositories/sso.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import { DEFAULT_PROVISIONING, type Provisioning, type SsoSettingsBody, type SsoSettingsObject } from './schemas.js';

/** An organisation's single sign-on settings as the login flow uses them. */
export interface SsoSettings {
  organisationId: string;
  oidc: OidcProviderSettings | null;
  /** Sealed by the secret box; see `clientSecret`. */
  sealedClientSecret: string | null;
  saml: SamlProviderSettings | null;
  provisioning: Provisioning;
  lastUpdatedAt: string | null;
}

/** The routes this server answers the identity providers on, under its public address. */
export const callbackPaths = {
  oidc: '/v1/sso/oidc/callback',
  saml: '/v1/sso/saml/acs',
  metadata: '/v1/sso/saml/metadata',
} as const;

/**
 * The identity providers of organisations and how first-time users are provisioned. The OIDC
 * client secret is sealed by the secret box and never leaves the server; answers say only
 * whether one is set.
 */
export function createSsoSettings(deps: {
  repo: SsoRepository;
  workspaces: WorkspaceRepository;
  secretBox: SecretBox;
  clock: Clock;
  /** OIDC_CUSTOM_SCOPES, asked for on every OIDC login. */
  extraScopes: readonly string[];
  onChange: () => void;
}) {
  async function read(organisationId: string): Promise<SsoSettings> {
    const row = await deps.repo.findSettings(organisationId);
    return {
      organisationId,
      oidc: row?.oidc ? (JSON.parse(row.oidc) as OidcProviderSettings) : null,
      sealedClientSecret: row?.oidc_client_secret ?? null,
      saml: row?.saml ? (JSON.parse(row.saml) as SamlProviderSettings) : null,
      provisioning: row
        ? { ...DEFAULT_PROVISIONING, ...(JSON.parse(row.provisioning) as Partial<Provisioning>) }
        : { ...DEFAULT_PROVISIONING },
      lastUpdatedAt: row?.last_updated_at ?? null,
    };
  }

  function toObject(settings: SsoSettings, base: string): SsoSettingsObject {
    const { oidc, saml } = settings;
    const cert = saml ? new X509Certificate(normaliseCertificate(saml.idp_cert)!) : null;
    return {
      object: 'sso_settings',
      organisation_id: settings.organisationId,
      oidc: oidc && {
        issuer: oidc.issuer,
        client_id: oidc.client_id,
        client_secret_set: settings.sealedClientSecret !== null,
        scopes: [...new Set(['openid', 'email', 'profile', ...oidc.scopes, ...deps.extraScopes])],
        redirect_uri: `${base}${callbackPaths.oidc}`,
      },
      saml: saml && {
        entry_point: saml.entry_point,
        sp_entity_id: saml.sp_entity_id,
        idp_issuer: saml.idp_issuer,
        idp_cert_fingerprint: cert!.fingerprint256,
        idp_cert_valid_to: new Date(cert!.validTo).toISOString(),
        acs_url: `${base}${callbackPaths.saml}`,
        metadata_url: `${base}${callbackPaths.metadata}`,
      },
      provisioning: settings.provisioning,
      last_updated_at: settings.lastUpdatedAt,
    };
  }

  /** The default workspace of provisioned users, as an id; it must be an active workspace. */
  async function resolveWorkspace(organisationId: string, given: string | null): Promise<string | null> {
    if (given === null) return null;
    const workspace = await deps.workspaces.findByIdOrSlug(organisationId, given);
    if (!workspace)
      throw new AppError('NOT_FOUND', `Workspace ${given} not found.`, { param: 'provisioning.default_workspace' });
    if (workspace.status !== 'active')
      throw invalid('provisioning.default_workspace', `Workspace ${workspace.slug} is archived.`);
    return workspace.id;
  }

  return {
    read,
    toObject,

    /** The OIDC client secret in clear, for the token request; null for a public client. */
    clientSecret: (settings: SsoSettings): string | null =>
      settings.sealedClientSecret === null ? null : deps.secretBox.decrypt(settings.sealedClientSecret),

    /** Sections given replace theirs (null removes one); sections left out stay as they are. */
    async update(organisationId: string, body: SsoSettingsBody, base: string): Promise<SsoSettingsObject> {
      const current = await read(organisationId);
      let oidc = current.oidc;
      let sealed = current.sealedClientSecret;
      if (body.oidc === null) {
        oidc = null;
        sealed = null;
      } else if (body.oidc !== undefined) {
        const { client_secret: secret, ...rest } = body.oidc;
        oidc = rest;
        if (secret === null) sealed = null;
        else if (secret !== undefined) sealed = deps.secretBox.encrypt(secret);
        else if (current.oidc === null)
          throw invalid(
            'oidc.client_secret',
            'client_secret is required (null for a public client) when OIDC is first set.',
          );
      }
      const saml = body.saml === undefined ? current.saml : body.saml;
      const given = body.provisioning ?? {};
      const provisioning: Provisioning = {
        ...current.provisioning,
        ...given,
        ...(given.default_workspace !== undefined
          ? { default_workspace: await resolveWorkspace(organisationId, given.default_workspace) }
          : {}),
      };
      const stamp = new Date(deps.clock.now()).toISOString();
      await deps.repo.saveProviders(
        organisationId,
        {
          oidc: oidc && JSON.stringify(oidc),
          oidc_client_secret: sealed,
          saml: saml && JSON.stringify(saml),
          provisioning: JSON.stringify(provisioning),
        },
        stamp,
      );
      deps.onChange();
      return toObject(await read(organisationId), base);
    },
  };
}

export type SsoSettingsService = ReturnType<typeof createSsoSettings>;
