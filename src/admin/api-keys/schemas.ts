import { z } from 'zod';
import { rateLimitsField, usageLimitsField } from '../../limits/schemas.js';
import { idOrSlug, paginationQuery } from '../shared/pagination.js';

const keyName = z.string().min(1).max(255);

export const createApiKeyBody = z
  .object({
    name: keyName,
    description: z.string().max(1024).nullable().optional(),
    scopes: z.array(z.string().min(1).max(128)).max(200),
    workspace_id: idOrSlug.optional(),
    user_id: z.uuid().optional(),
    organisation_id: z.uuid().optional(),
    expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
    rate_limits: rateLimitsField.optional(),
    usage_limits: usageLimitsField.optional(),
  })
  .strict();

export const updateApiKeyBody = z
  .object({
    name: keyName.optional(),
    description: z.string().max(1024).nullable().optional(),
    scopes: z.array(z.string().min(1).max(128)).max(200).optional(),
    expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
    rate_limits: rateLimitsField.optional(),
    usage_limits: usageLimitsField.optional(),
    reset_usage: z.boolean().optional().describe('Starts a new usage period now (an exhausted key becomes active).'),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one field to change' });

export const listApiKeysQuery = z.object({ workspace_id: idOrSlug.optional(), ...paginationQuery }).strict();

export const apiKeyParams = z.object({ apiKeyId: z.string().min(1).max(64) });

export const apiKeyObject = z.object({
  id: z.uuid(),
  key: z.string().describe('Masked: the raw key is shown only once, when it is created.'),
  name: z.string(),
  description: z.string().nullable(),
  type: z.enum(['organisation-service', 'workspace-service', 'workspace-user']),
  organisation_id: z.uuid(),
  workspace_id: z.string().nullable(),
  user_id: z.string().nullable(),
  status: z.enum(['active', 'revoked', 'expired']),
  scopes: z.array(z.string()),
  creation_mode: z.string(),
  expires_at: z.string().nullable(),
  rate_limits: z.array(z.object({ type: z.string(), unit: z.string(), value: z.number() })).nullable(),
  usage_limits: z.record(z.string(), z.unknown()).nullable(),
  last_reset_at: z.string().nullable(),
  created_at: z.string(),
  last_updated_at: z.string(),
  object: z.literal('api-key'),
});

export const createdApiKey = z.object({ id: z.uuid(), key: z.string(), object: z.literal('api-key') });

export type CreateApiKeyBody = z.infer<typeof createApiKeyBody>;
export type UpdateApiKeyBody = z.infer<typeof updateApiKeyBody>;
export type ApiKeyObject = z.infer<typeof apiKeyObject>;
