import { z } from 'zod';
import { SECRET_MANAGER_TYPES } from '../../secrets/auth-config.js';
import { credentialName, credentialSlug, credentialStatus, tagsQuery, tagsSchema } from '../credentials/schemas.js';
import { idOrSlug, paginationQuery } from '../shared/pagination.js';

export const managerType = z
  .enum(SECRET_MANAGER_TYPES)
  .describe(
    'aws_sm (AWS Secrets Manager), azure_kv (Azure Key Vault) or hashicorp_vault (HashiCorp Vault, KV version 2).',
  );

const AUTH_CONFIG_HELP = [
  'How the server signs in to the secret manager; the field that names the method must match manager_type.',
  'aws_sm: aws_auth_type accessKey {aws_access_key_id, aws_secret_access_key, aws_region}, assumedRole {aws_role_arn, aws_external_id?, aws_region}',
  'or serviceRole {aws_region?}; optional aws_secrets_manager_endpoint and aws_sts_endpoint.',
  'azure_kv: azure_auth_mode entra {azure_entra_tenant_id, azure_entra_client_id, azure_entra_client_secret, azure_vault_url, azure_authority_host?},',
  'managed {azure_managed_client_id?, azure_vault_url} or default {azure_vault_url}.',
  'hashicorp_vault: vault_auth_type token {vault_token}, approle {vault_role_id, vault_secret_id, vault_approle_mount?} or kubernetes',
  '{vault_role, vault_kubernetes_mount?}, each with vault_addr and vault_namespace?.',
  'Secret fields are stored encrypted and shown masked; sending a mask back keeps the stored value.',
].join(' ');

export const authConfigField = z.record(z.string(), z.unknown()).describe(AUTH_CONFIG_HELP);

const secretPath = z
  .string()
  .min(1)
  .max(1024)
  .describe(
    'Where the secret is: an AWS secret name or ARN, a Key Vault secret name, or a Vault KV v2 path <mount>/<path> (secret/openai).',
  );
const secretKey = z
  .string()
  .min(1)
  .max(256)
  .describe('A key of a JSON secret (or a field of a Vault entry); without it the whole secret is the value.');
const description = z.string().max(1024);
const allowedWorkspaces = z
  .array(idOrSlug)
  .min(1)
  .max(1000)
  .describe('Workspaces (ids or slugs) that may use the reference; sets allow_all_workspaces to false.');

export const createSecretReferenceBody = z
  .object({
    name: credentialName,
    slug: credentialSlug.optional(),
    organisation_id: z.uuid().optional(),
    description: description.nullable().optional(),
    manager_type: managerType,
    auth_config: authConfigField,
    secret_path: secretPath,
    secret_key: secretKey.nullable().optional(),
    allow_all_workspaces: z
      .boolean()
      .optional()
      .describe('Every workspace may use the reference (the default, unless allowed_workspaces is given).'),
    allowed_workspaces: allowedWorkspaces.optional(),
    tags: tagsSchema.nullable().optional(),
  })
  .strict();

export const updateSecretReferenceBody = z
  .object({
    name: credentialName.optional(),
    description: description.nullable().optional(),
    auth_config: authConfigField
      .optional()
      .describe(
        'Replaces the stored object (the same manager_type). A secret field sent back as its mask keeps its stored value.',
      ),
    secret_path: secretPath.optional(),
    secret_key: secretKey.nullable().optional(),
    allow_all_workspaces: z.boolean().optional(),
    allowed_workspaces: allowedWorkspaces.optional(),
    tags: tagsSchema.nullable().optional(),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one field to change' });

export const listSecretReferencesQuery = z
  .object({
    manager_type: managerType.optional(),
    tags: tagsQuery.optional(),
    search: z.string().min(1).max(255).optional().describe('Part of the name or slug (any case).'),
    status: credentialStatus.default('active'),
    ...paginationQuery,
  })
  .strict();

export const secretReferenceParams = z.object({ id: idOrSlug });

export const secretReferenceObject = z.object({
  id: z.uuid(),
  organisation_id: z.uuid(),
  name: z.string(),
  slug: z.string(),
  description: z.string().nullable(),
  manager_type: managerType,
  auth_config: z
    .record(z.string(), z.unknown())
    .describe('As stored, with secret fields masked (abcd****wxyz); they are never returned in full.'),
  secret_path: z.string(),
  secret_key: z.string().nullable(),
  allow_all_workspaces: z.boolean(),
  allowed_workspaces: z.array(z.string()).describe('Workspace ids (empty when allow_all_workspaces is true).'),
  tags: z.record(z.string(), z.string()),
  status: credentialStatus,
  created_by: z.string().nullable(),
  created_at: z.string(),
  last_updated_at: z.string(),
  object: z.literal('secret-reference'),
});

export const createdSecretReference = z.object({
  id: z.uuid(),
  slug: z.string(),
  object: z.literal('secret-reference'),
});

export type CreateSecretReferenceBody = z.infer<typeof createSecretReferenceBody>;
export type UpdateSecretReferenceBody = z.infer<typeof updateSecretReferenceBody>;
export type ListSecretReferencesQuery = z.infer<typeof listSecretReferencesQuery>;
export type SecretReferenceObject = z.infer<typeof secretReferenceObject>;
