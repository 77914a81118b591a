import { z } from 'zod';

/** Asymmetric JWS algorithms only: a JWKS publishes public keys, and `none` or a shared secret is never a signature. */
export const JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;

const jwksUrl = z
  .string()
  .max(2048)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password;
    } catch {
      return false;
    }
  }, 'must be an http(s) URL without user:password@')
  .describe(
    'Where the public keys are published (the IdP’s jwks_uri). Fetched by the server; loopback and private addresses are allowed (you configure it).',
  );

/** Claim names, literal (a dot or a URL in a name is part of the name); the first one present is used. */
const claimNames = (fallback: readonly string[], what: string) =>
  z
    .array(z.string().min(1).max(255))
    .min(1)
    .max(8)
    .default([...fallback])
    .describe(`${what} Default: ${fallback.map((name) => `\`${name}\``).join(', ')}.`);

export const DEFAULT_CLAIMS = {
  user: ['sub'],
  email: ['email', 'email_id'],
  workspace: ['workspace_slug', 'workspace_id'],
  scopes: ['scope', 'scopes'],
  organisation: ['organisation_id'],
} as const;

export const jwtClaimsShape = z
  .strictObject({
    user: claimNames(
      DEFAULT_CLAIMS.user,
      'Claims that name the user (required in every token; the first present counts).',
    ),
    email: claimNames(DEFAULT_CLAIMS.email, "Claims with the user's e-mail (optional; matches svcgw users by e-mail)."),
    workspace: claimNames(DEFAULT_CLAIMS.workspace, 'Claims with the workspace slug or id (required in every token).'),
    scopes: claimNames(
      DEFAULT_CLAIMS.scopes,
      'Claims with the scopes: a space-separated string or an array of strings (required in every token).',
    ),
    organisation: claimNames(
      DEFAULT_CLAIMS.organisation,
      'Claims with the organisation id (optional; when present it must be this organisation’s id).',
    ),
  })
  .default({
    user: [...DEFAULT_CLAIMS.user],
    email: [...DEFAULT_CLAIMS.email],
    workspace: [...DEFAULT_CLAIMS.workspace],
    scopes: [...DEFAULT_CLAIMS.scopes],
    organisation: [...DEFAULT_CLAIMS.organisation],
  })
  .describe('Which claims carry what; each lists names tried in order.');

/** `PUT /v1/settings/jwt` and what the `jwt_settings.settings` column holds (with the issuer). */
export const jwtSettingsInput = z.strictObject({
  enabled: z.boolean().default(true).describe('False keeps the settings but refuses every JWT (401).'),
  jwks_url: jwksUrl,
  issuer: z
    .string()
    .min(1)
    .max(1024)
    .describe('The exact `iss` of accepted tokens; it also tells which organisation a token is for.'),
  audience: z
    .array(z.string().min(1).max(1024))
    .min(1)
    .max(16)
    .nullable()
    .describe(
      'Accepted `aud` values (a token passes when its aud holds one of them); null skips the audience check (not recommended).',
    ),
  algorithms: z
    .array(z.enum(JWT_ALGORITHMS))
    .min(1)
    .default([...JWT_ALGORITHMS])
    .describe('Signature algorithms accepted (asymmetric only).'),
  clock_tolerance_seconds: z
    .number()
    .int()
    .min(0)
    .max(300)
    .default(30)
    .describe('Slack allowed on `exp` and `nbf` for clocks that disagree.'),
  jwks_cache_seconds: z
    .number()
    .int()
    .min(60)
    .max(86_400)
    .default(600)
    .describe(
      'How long fetched keys are used before the JWKS is fetched again; an unknown `kid` fetches it sooner (at most every 30 s).',
    ),
  require_known_user: z
    .boolean()
    .default(false)
    .describe(
      'True refuses tokens whose user matches no svcgw user (by id or e-mail); false lets them act as the workspace with their scopes.',
    ),
  claims: jwtClaimsShape,
});

export type JwtSettingsInput = z.input<typeof jwtSettingsInput>;
export type JwtSettings = z.output<typeof jwtSettingsInput>;
export type JwtClaimNames = JwtSettings['claims'];

/** The settings as stored: everything but the issuer, which has a column of its own. */
export const storedSettings = (settings: JwtSettings): string => {
  const { issuer: _issuer, ...rest } = settings;
  return JSON.stringify(rest);
};

export const parseStoredSettings = (issuer: string, json: string): JwtSettings =>
  jwtSettingsInput.parse({ ...(JSON.parse(json) as object), issuer });
