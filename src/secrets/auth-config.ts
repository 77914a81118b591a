import { z } from 'zod';
import type { SecretBox } from '../lib/secret-box.js';
import type { SecretManagerType } from '../storage/schema.js';

export type { SecretManagerType };
export const SECRET_MANAGER_TYPES = ['aws_sm', 'azure_kv', 'hashicorp_vault'] as const;

/** Fields of `auth_config` that are secrets: sealed at rest, shown masked, redacted in audit records. */
export const AUTH_SECRET_FIELDS: readonly string[] = [
  'aws_secret_access_key',
  'azure_entra_client_secret',
  'vault_token',
  'vault_secret_id',
];

const text = (max = 256) => z.string().min(1).max(max);
const secret = z
  .string()
  .min(1)
  .max(4096)
  .refine((value) => !/[\0\r\n]/.test(value), { message: 'must not contain NUL, CR or LF characters' });

/**
 * An http(s) URL without credentials, query or fragment: where a secret manager or its sign-in
 * service is. Plain http sends credentials in clear: for a loopback Vault agent or a network
 * already encrypted (a service mesh). `httpsOnly` for Azure, whose libraries refuse http.
 */
const serviceUrl = (httpsOnly = false) =>
  z
    .string()
    .max(2048)
    .superRefine((value, ctx) => {
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        ctx.addIssue({ code: 'custom', message: `must be an ${httpsOnly ? 'https' : 'http(s)'} URL` });
        return;
      }
      if (url.protocol !== 'https:' && (httpsOnly || url.protocol !== 'http:'))
        ctx.addIssue({ code: 'custom', message: `must be an ${httpsOnly ? 'https' : 'http(s)'} URL` });
      else if (url.username || url.password)
        ctx.addIssue({ code: 'custom', message: 'must not carry a user name or password' });
      else if (url.search || url.hash) ctx.addIssue({ code: 'custom', message: 'must not carry a query or fragment' });
    });
const awsRegion = z.string().regex(/^[a-z0-9-]{1,32}$/, 'an AWS region such as us-east-1');
const awsEndpoints = {
  aws_secrets_manager_endpoint: serviceUrl()
    .optional()
    .describe('Secrets Manager endpoint (a VPC endpoint, say); default: the regional AWS endpoint.'),
  aws_sts_endpoint: serviceUrl()
    .optional()
    .describe('STS endpoint for assumedRole; default: the regional AWS endpoint.'),
};
const vaultCommon = {
  vault_addr: serviceUrl().describe('Address of the Vault server, such as https://vault.example.com:8200.'),
  vault_namespace: text().optional().describe('Vault Enterprise namespace (X-Vault-Namespace).'),
};
const mount = z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, 'a Vault mount name');

/** One schema per backend and sign-in method; the field names are those of the reference gateway where it has them. */
export const awsAuthSchema = z.discriminatedUnion('aws_auth_type', [
  z
    .object({
      aws_auth_type: z.literal('accessKey'),
      aws_access_key_id: text(128),
      aws_secret_access_key: secret,
      aws_region: awsRegion,
      ...awsEndpoints,
    })
    .strict(),
  z
    .object({
      aws_auth_type: z.literal('assumedRole'),
      aws_role_arn: z.string().regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/, 'an IAM role ARN'),
      aws_external_id: text(1224).optional(),
      aws_region: awsRegion,
      ...awsEndpoints,
    })
    .strict(),
  z.object({ aws_auth_type: z.literal('serviceRole'), aws_region: awsRegion.optional(), ...awsEndpoints }).strict(),
]);

const vaultUrl = serviceUrl(true).describe('The key vault, such as https://my-vault.vault.azure.net.');
export const azureAuthSchema = z.discriminatedUnion('azure_auth_mode', [
  z
    .object({
      azure_auth_mode: z.literal('entra'),
      azure_entra_tenant_id: text(128),
      azure_entra_client_id: text(128),
      azure_entra_client_secret: secret,
      azure_vault_url: vaultUrl,
      azure_authority_host: serviceUrl(true)
        .optional()
        .describe('Microsoft Entra authority host; default https://login.microsoftonline.com.'),
    })
    .strict(),
  z
    .object({
      azure_auth_mode: z.literal('managed'),
      azure_managed_client_id: text(128).optional(),
      azure_vault_url: vaultUrl,
    })
    .strict(),
  z.object({ azure_auth_mode: z.literal('default'), azure_vault_url: vaultUrl }).strict(),
]);

export const vaultAuthSchema = z.discriminatedUnion('vault_auth_type', [
  z.object({ vault_auth_type: z.literal('token'), vault_token: secret, ...vaultCommon }).strict(),
  z
    .object({
      vault_auth_type: z.literal('approle'),
      vault_role_id: text(),
      vault_secret_id: secret,
      vault_approle_mount: mount.optional().describe('Mount of the AppRole auth method; default approle.'),
      ...vaultCommon,
    })
    .strict(),
  z
    .object({
      vault_auth_type: z.literal('kubernetes'),
      vault_role: text(),
      vault_kubernetes_mount: mount.optional().describe('Mount of the Kubernetes auth method; default kubernetes.'),
      ...vaultCommon,
    })
    .strict(),
]);

export type AwsAuth = z.infer<typeof awsAuthSchema>;
export type AzureAuth = z.infer<typeof azureAuthSchema>;
export type VaultAuth = z.infer<typeof vaultAuthSchema>;
export type AuthConfig = AwsAuth | AzureAuth | VaultAuth;

/** What `auth_config` must hold for a manager type: the schema, and the field that names the sign-in method. */
export const AUTH_SCHEMAS = {
  aws_sm: { schema: awsAuthSchema, discriminator: 'aws_auth_type' },
  azure_kv: { schema: azureAuthSchema, discriminator: 'azure_auth_mode' },
  hashicorp_vault: { schema: vaultAuthSchema, discriminator: 'vault_auth_type' },
} as const satisfies Record<SecretManagerType, { schema: z.ZodType; discriminator: string }>;

/**
 * Sign-in methods that use the server's own identity (its AWS role, Azure managed identity or
 * environment, Kubernetes service account) instead of credentials stored in the reference.
 */
export function usesAmbientIdentity(auth: AuthConfig): boolean {
  if ('aws_auth_type' in auth) return auth.aws_auth_type !== 'accessKey';
  if ('azure_auth_mode' in auth) return auth.azure_auth_mode !== 'entra';
  return auth.vault_auth_type === 'kubernetes';
}

/** The sign-in method's name, for messages: `accessKey`, `managed`, `approle`, … */
export function authMethodOf(auth: AuthConfig): string {
  if ('aws_auth_type' in auth) return auth.aws_auth_type;
  if ('azure_auth_mode' in auth) return auth.azure_auth_mode;
  return auth.vault_auth_type;
}

/** A secret field as stored: encrypted, with what may be shown of it. */
interface SealedField {
  $sealed: string;
  hint: string;
}

const isSealed = (value: unknown): value is SealedField =>
  typeof value === 'object' && value !== null && typeof (value as SealedField).$sealed === 'string';

/** The first and last four characters of a long secret, nothing of a short one. */
export const maskSecretValue = (raw: string): string =>
  raw.length >= 16 ? `${raw.slice(0, 4)}****${raw.slice(-4)}` : '****';

/**
 * The stored JSON of an auth config: secret fields encrypted one by one. A secret field sent
 * back exactly as it was shown (its mask) keeps its stored value, so that a client may GET,
 * change another field and PUT the object back.
 */
export function sealAuthConfig(box: SecretBox, auth: Record<string, unknown>, previousStored?: string): string {
  const previous = previousStored ? (JSON.parse(previousStored) as Record<string, unknown>) : {};
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(auth)) {
    if (value === undefined) continue;
    if (!AUTH_SECRET_FIELDS.includes(name) || typeof value !== 'string') {
      out[name] = value;
      continue;
    }
    const before = previous[name];
    out[name] =
      isSealed(before) && before.hint === value
        ? before
        : ({ $sealed: box.encrypt(value), hint: maskSecretValue(value) } satisfies SealedField);
  }
  return JSON.stringify(out);
}

/** The auth config with its secret fields decrypted, for signing in to the secret manager. */
export function openAuthConfig(box: SecretBox, stored: string): Record<string, unknown> {
  const auth = JSON.parse(stored) as Record<string, unknown>;
  for (const [name, value] of Object.entries(auth)) if (isSealed(value)) auth[name] = box.decrypt(value.$sealed);
  return auth;
}

/**
 * The stored auth config with masks in place of the sealed secrets: what a GET shows, and what a
 * PUT may send back to keep them (it is validated as if the masks were the secrets).
 */
export function maskAuthConfig(stored: string): Record<string, unknown> {
  const auth = JSON.parse(stored) as Record<string, unknown>;
  for (const [name, value] of Object.entries(auth)) if (isSealed(value)) auth[name] = value.hint;
  return auth;
}

/** What an `auth_config` without its method field says about the method. */
export type InferredAuthMethod =
  | { kind: 'named' }
  | { kind: 'unknown' }
  | { kind: 'inferred'; method: string }
  | { kind: 'ambiguous'; methods: string[] };

/**
 * The sign-in method of an `auth_config` that leaves out its method field, as the reference
 * gateway's examples do (a Vault token config is `{vault_addr, vault_token}`). A method is
 * taken only when it is the one method whose schema accepts the fields given, or, when none
 * accepts them, the one method that has every field given (so that a missing field is reported
 * against it). Fields that no method has are `unknown` (the schema's message names the method
 * field); fields several methods fit are ambiguous, and the method must be named.
 */
export function inferAuthMethod(type: SecretManagerType, auth: Record<string, unknown>): InferredAuthMethod {
  const { schema, discriminator } = AUTH_SCHEMAS[type];
  if (auth[discriminator] !== undefined) return { kind: 'named' };
  const options = schema.options as readonly z.ZodObject[];
  const methodOf = (option: z.ZodObject) => (option.shape[discriminator] as z.ZodLiteral<string>).value;
  const accepting = options.filter(
    (option) => option.safeParse({ ...auth, [discriminator]: methodOf(option) }).success,
  );
  if (accepting.length === 1) return { kind: 'inferred', method: methodOf(accepting[0]!) };
  if (accepting.length > 1) return { kind: 'ambiguous', methods: accepting.map(methodOf) };
  const given = Object.keys(auth);
  const covering = options.filter((option) => given.every((field) => field in option.shape));
  if (covering.length === 1) return { kind: 'inferred', method: methodOf(covering[0]!) };
  if (covering.length === 0) return { kind: 'unknown' };
  return { kind: 'ambiguous', methods: covering.map(methodOf) };
}
