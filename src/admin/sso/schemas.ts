import { z } from 'zod';
import { isInsecureIssuerAllowed } from '../../auth/sso/oidc.js';
import { normaliseCertificate } from '../../auth/sso/saml.js';
import { workspaceRole } from '../members/schemas.js';
import { idOrSlug } from '../shared/pagination.js';
import { sessionObject } from '../sessions/schemas.js';
import { userObject } from '../users/schemas.js';

/** https, or http on this machine (an identity provider run locally for development). */
const providerUrl = (what: string) =>
  z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .refine(isInsecureIssuerAllowed, `${what} must use https:// (http:// only on 127.0.0.1, [::1] or localhost)`);

/** An OAuth scope token (RFC 6749 §3.3). */
const scopeToken = z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/, 'not an OAuth scope');

export const oidcSettingsBody = z
  .object({
    issuer: providerUrl('issuer').describe('The OpenID provider’s issuer; its discovery document is read from it.'),
    client_id: z.string().min(1).max(255).describe('The client id svcgw is registered under at the provider.'),
    client_secret: z
      .string()
      .min(1)
      .max(1024)
      .nullable()
      .optional()
      .describe(
        'The client secret (client_secret_basic); encrypted at rest and never returned. Left out: the stored one is kept; null: a public client (PKCE only).',
      ),
    scopes: z
      .array(scopeToken)
      .max(20)
      .default([])
      .describe('Scopes asked for besides openid, email and profile (and OIDC_CUSTOM_SCOPES).'),
  })
  .strict();

export const samlSettingsBody = z
  .object({
    entry_point: providerUrl('entry_point').describe(
      'The identity provider’s single sign-on URL (HTTP-Redirect binding).',
    ),
    idp_cert: z
      .string()
      .min(1)
      .max(20_000)
      .refine((cert) => normaliseCertificate(cert) !== null, 'not an X.509 certificate (PEM or base64)')
      .describe(
        'The identity provider’s signing certificate (PEM or its base64 body); assertions must be signed with it.',
      ),
    sp_entity_id: z
      .string()
      .min(1)
      .max(1024)
      .describe('svcgw’s entity id at the identity provider: the audience its assertions must name.'),
    idp_issuer: z
      .string()
      .min(1)
      .max(1024)
      .nullable()
      .default(null)
      .describe('When set, responses must come from this issuer (the identity provider’s entity id).'),
  })
  .strict();

export const provisioningShape = {
  create_users: z
    .boolean()
    .describe('Create a user on the first sign-in of an address that has no user and no pending invite.'),
  default_workspace: idOrSlug
    .nullable()
    .describe('The workspace such users join (id or slug); null: the organisation’s default workspace.'),
  default_workspace_role: workspaceRole.describe('Their role there.'),
};

export const DEFAULT_PROVISIONING = Object.freeze({
  create_users: true,
  default_workspace: null,
  default_workspace_role: 'member',
} as const);

export const ssoSettingsBody = z
  .object({
    oidc: oidcSettingsBody.nullable().optional().describe('The OIDC provider; null removes it, left out keeps it.'),
    saml: samlSettingsBody
      .nullable()
      .optional()
      .describe('The SAML identity provider; null removes it, left out keeps it.'),
    provisioning: z
      .object({
        create_users: provisioningShape.create_users.optional(),
        default_workspace: provisioningShape.default_workspace.optional(),
        default_workspace_role: provisioningShape.default_workspace_role.optional(),
      })
      .strict()
      .optional()
      .describe('Settings given replace theirs; the others keep their values.'),
  })
  .strict();

export const ssoSettingsObject = z.object({
  object: z.literal('sso_settings'),
  organisation_id: z.string(),
  oidc: z
    .object({
      issuer: z.string(),
      client_id: z.string(),
      client_secret_set: z.boolean().describe('Whether a client secret is stored (it is never returned).'),
      scopes: z
        .array(z.string())
        .describe('Every scope a login asks for (openid, email, profile, these settings’ and OIDC_CUSTOM_SCOPES).'),
      redirect_uri: z.string().describe('The redirect URI to register at the provider.'),
    })
    .nullable(),
  saml: z
    .object({
      entry_point: z.string(),
      sp_entity_id: z.string(),
      idp_issuer: z.string().nullable(),
      idp_cert_fingerprint: z.string().describe('SHA-256 fingerprint of the configured certificate.'),
      idp_cert_valid_to: z.string(),
      acs_url: z.string().describe('The assertion consumer service URL to register at the identity provider.'),
      metadata_url: z.string().describe('This service provider’s metadata (GET, no authentication).'),
    })
    .nullable(),
  provisioning: z.object(provisioningShape),
  last_updated_at: z.string().nullable(),
});

const loopbackUri = z.string().min(1).max(2048);

export const loginStartQuery = z
  .object({
    redirect_uri: loopbackUri.describe(
      'Where the browser is sent back with the one-time code: a loopback address http://127.0.0.1:<port>/… or http://[::1]:<port>/… (RFC 8252).',
    ),
    code_challenge: z
      .string()
      .regex(/^[A-Za-z0-9_-]{43}$/, 'must be the S256 challenge: base64url of the SHA-256 of the code_verifier')
      .describe('PKCE (RFC 7636) between the client and svcgw: the code_verifier is sent with the code.'),
    code_challenge_method: z.literal('S256').default('S256'),
    state: z
      .string()
      .min(1)
      .max(512)
      .optional()
      .describe('Returned unchanged on the redirect, for the client to check.'),
    workspace: idOrSlug
      .optional()
      .describe(
        'For organisation members: the workspace (id or slug) the session acts in; default: their oldest membership.',
      ),
  })
  .strict();

export const genericStartQuery = loginStartQuery.extend({
  protocol: z
    .enum(['oidc', 'saml'])
    .optional()
    .describe('The identity provider to use; default: the one configured (OIDC when both are).'),
});

/** The provider's answer: the parameters it sends are its own, so unknown ones are kept, not refused. */
export const oidcCallbackQuery = z.looseObject({
  state: z.string().max(512).optional(),
  code: z.string().max(4096).optional(),
  error: z.string().max(512).optional(),
  error_description: z.string().max(4096).optional(),
});

export const samlAcsBody = z.looseObject({
  SAMLResponse: z.string().min(1).max(1_000_000),
  RelayState: z.string().min(1).max(512),
});

export const tokenBody = z
  .object({
    code: z.string().min(1).max(512).describe('The one-time code the redirect carried.'),
    code_verifier: z
      .string()
      .regex(/^[A-Za-z0-9._~-]{43,128}$/, 'must be a PKCE code_verifier (43 to 128 characters)')
      .describe('The PKCE verifier whose S256 challenge the login started with.'),
  })
  .strict();

export const issuedSession = z.object({
  object: z.literal('session_token'),
  session_token: z
    .string()
    .describe('The session (svs-…), shown only here: send it as x-service-api-key or Authorization: Bearer.'),
  session: sessionObject,
  user: userObject,
});

export type OidcSettingsBody = z.infer<typeof oidcSettingsBody>;
export type SamlSettingsBody = z.infer<typeof samlSettingsBody>;
export type SsoSettingsBody = z.infer<typeof ssoSettingsBody>;
export type SsoSettingsObject = z.infer<typeof ssoSettingsObject>;
export type Provisioning = z.infer<z.ZodObject<typeof provisioningShape>>;
export type LoginStartQuery = z.infer<typeof loginStartQuery>;
export type TokenBody = z.infer<typeof tokenBody>;
