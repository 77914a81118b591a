import type { SsoProtocol } from '../../storage/schema.js';

/** Who the identity provider says signed in, as far as provisioning needs it. */
export interface SsoIdentity {
  protocol: SsoProtocol;
  /** OIDC `sub`, SAML NameID. */
  subject: string;
  email: string;
  /** The provider's `email_verified`; null when it does not say (SAML never does). */
  emailVerified: boolean | null;
  firstName: string | null;
  lastName: string | null;
}

const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;

export const looksLikeEmail = (value: unknown): value is string =>
  typeof value === 'string' && value.length <= 320 && EMAIL_RE.test(value);

export const optionalName = (value: unknown): string | null =>
  typeof value === 'string' && value.trim().length > 0 ? value.trim().slice(0, 255) : null;
