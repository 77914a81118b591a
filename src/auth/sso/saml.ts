import type { CacheProvider, Profile, SAML } from '@node-saml/node-saml';
import { randomBytes, X509Certificate } from 'node:crypto';
import { AppError } from '../../lib/errors.js';
import { looksLikeEmail, optionalName, type SsoIdentity } from './identity.js';

/** An organisation's SAML 2.0 identity provider, as its settings name it. */
export interface SamlProviderSettings {
  /** The identity provider's single sign-on URL (HTTP-Redirect binding). */
  entry_point: string;
  /** The identity provider's signing certificate (PEM, or its base64 body). */
  idp_cert: string;
  /** This server's entity id (the audience assertions must name). */
  sp_entity_id: string;
  /** When set, responses must come from this issuer. */
  idp_issuer: string | null;
}

/** Attributes identity providers commonly carry the address and names in. */
const EMAIL_ATTRIBUTES = [
  'email',
  'mail',
  'emailAddress',
  'urn:oid:0.9.2342.19200300.100.1.3',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
];
const FIRST_NAME_ATTRIBUTES = [
  'givenName',
  'firstName',
  'urn:oid:2.5.4.42',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname',
];
const LAST_NAME_ATTRIBUTES = [
  'sn',
  'lastName',
  'surname',
  'urn:oid:2.5.4.4',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname',
];

/** The AuthnRequest a login sent: its id, and when (ISO 8601). */
export interface SamlRequest {
  id: string;
  issuedAt: string;
}

/** An AuthnRequest id: an XML NCName (it starts with `_`), 160 random bits. */
export const newSamlRequestId = (): string => `_${randomBytes(20).toString('hex')}`;

/** The certificate as node-saml takes it, or null when it is not an X.509 certificate. */
export function normaliseCertificate(text: string): string | null {
  const body = text
    .replace(/-----(BEGIN|END) CERTIFICATE-----/g, '')
    .replace(/\s+/g, '')
    .trim();
  if (!/^[A-Za-z0-9+/]+=*$/.test(body)) return null;
  const pem = `-----BEGIN CERTIFICATE-----\n${body.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
  try {
    new X509Certificate(pem);
    return pem;
  } catch {
    return null;
  }
}

/**
 * Accepts exactly one InResponseTo: the id of the AuthnRequest this login sent, stored with the
 * login (so that any instance can check it, and a response to another request is refused).
 */
function onlyRequest(request: SamlRequest): CacheProvider {
  return {
    // Called when the request is made; the login row holds the id already.
    saveAsync: async (_key, value) => ({ value, createdAt: Date.now() }),
    // node-saml reads the value as the time the request was made.
    getAsync: async (key) => (key === request.id ? request.issuedAt : null),
    removeAsync: async (key) => key,
  };
}

/**
 * The service provider of SAML 2.0 Web SSO, through node-saml: the AuthnRequest (HTTP-Redirect)
 * and the validation of the answer posted to the assertion consumer service. Assertions must be
 * signed by the configured certificate (`wantAssertionsSigned`); a signed response around an
 * unsigned assertion is refused as well. Audience, InResponseTo, issuer and validity window are
 * checked too.
 */
export function createSamlServiceProvider() {
  // node-saml and its XML stack are loaded on the first SAML login, not by every server.
  let library: Promise<typeof import('@node-saml/node-saml')> | undefined;

  async function saml(settings: SamlProviderSettings, callbackUrl: string, request: SamlRequest): Promise<SAML> {
    const cert = normaliseCertificate(settings.idp_cert);
    if (!cert) throw new AppError('SSO_NOT_CONFIGURED', 'The SAML identity provider certificate is not valid.');
    const { SAML, ValidateInResponseTo } = await (library ??= import('@node-saml/node-saml'));
    return new SAML({
      callbackUrl,
      entryPoint: settings.entry_point,
      issuer: settings.sp_entity_id,
      audience: settings.sp_entity_id,
      idpCert: cert,
      ...(settings.idp_issuer ? { idpIssuer: settings.idp_issuer } : {}),
      wantAssertionsSigned: true,
      wantAuthnResponseSigned: false,
      validateInResponseTo: ValidateInResponseTo.always,
      cacheProvider: onlyRequest(request),
      generateUniqueId: () => request.id,
      disableRequestedAuthnContext: true,
      acceptedClockSkewMs: 60_000,
    });
  }

  return {
    /** The identity provider's URL with the AuthnRequest whose id is `requestId`. */
    async authorizeUrl(settings: SamlProviderSettings, callbackUrl: string, request: SamlRequest, relayState: string) {
      return (await saml(settings, callbackUrl, request)).getAuthorizeUrlAsync(relayState, undefined, {});
    },

    /** This service provider's metadata, for the identity provider's administrator. */
    async metadata(settings: SamlProviderSettings, callbackUrl: string): Promise<string> {
      const unused = { id: newSamlRequestId(), issuedAt: new Date().toISOString() };
      return (await saml(settings, callbackUrl, unused)).generateServiceProviderMetadata(null, null);
    },

    /** Validates the posted SAMLResponse and reads who signed in. */
    async validate(
      settings: SamlProviderSettings,
      callbackUrl: string,
      request: SamlRequest,
      posted: { SAMLResponse: string; RelayState: string },
    ): Promise<SsoIdentity> {
      let profile: Profile | null;
      try {
        ({ profile } = await (await saml(settings, callbackUrl, request)).validatePostResponseAsync(posted));
      } catch (error) {
        throw new AppError('SSO_LOGIN_FAILED', `The SAML response was refused: ${reason(error)}`, { cause: error });
      }
      if (!profile)
        throw new AppError('SSO_LOGIN_FAILED', 'The SAML response carries no assertion of a signed-in user.');
      const email = [...EMAIL_ATTRIBUTES.map((name) => firstValue(profile[name])), profile.nameID].find(looksLikeEmail);
      if (!email)
        throw new AppError(
          'SSO_LOGIN_FAILED',
          'The SAML assertion names no e-mail address (NameID in emailAddress format, or an email or mail attribute).',
        );
      return {
        protocol: 'saml',
        subject: profile.nameID,
        email: email.toLowerCase(),
        emailVerified: null,
        firstName: optionalName(FIRST_NAME_ATTRIBUTES.map((name) => firstValue(profile[name])).find(Boolean)),
        lastName: optionalName(LAST_NAME_ATTRIBUTES.map((name) => firstValue(profile[name])).find(Boolean)),
      };
    },
  };
}

export type SamlServiceProvider = ReturnType<typeof createSamlServiceProvider>;

const firstValue = (value: unknown): unknown => (Array.isArray(value) ? value[0] : value);

/** node-saml's reason, with what it means for the operator where it is terse. */
function reason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/^Invalid (document )?signature/.test(message))
    return `${message}: the assertion must be signed with the identity provider's certificate, and not altered since.`;
  if (/InResponseTo/.test(message)) return `${message}: it does not answer the request this login sent.`;
  return message;
}
