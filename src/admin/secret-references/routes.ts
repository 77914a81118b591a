import { z } from 'zod';
import { ADMIN_ONLY, ORG_ADMINS } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { AUTH_SECRET_FIELDS } from '../../secrets/auth-config.js';
import { listBody } from '../shared/pagination.js';
import {
  createdSecretReference,
  createSecretReferenceBody,
  listSecretReferencesQuery,
  secretReferenceObject,
  secretReferenceParams,
  updateSecretReferenceBody,
} from './schemas.js';
import type { SecretReferenceService } from './service.js';

const TAG = ['Secret-References'];
const auth = (verb: string) => ({ scope: `secret_references.${verb}`, keyTypes: ADMIN_ONLY, roles: ORG_ADMINS });
// vault_secret_id does not look secret by its name alone; the others do, but are listed for clarity.
const audit = (action: string) => ({ resourceType: 'secret_reference', action, secretFields: AUTH_SECRET_FIELDS });

export function registerSecretReferenceRoutes(app: ZodApp, service: SecretReferenceService): void {
  app.get(
    '/v1/secret-references',
    {
      schema: {
        tags: TAG,
        summary: 'List secret references',
        description: 'Filters: manager_type, tags=key:value,key2:value2 (all pairs), search (name or slug), status.',
        querystring: listSecretReferencesQuery,
        response: {
          200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(secretReferenceObject) }),
        },
      },
      config: { auth: auth('list') },
    },
    async (request) => {
      const { total, data } = await service.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.post(
    '/v1/secret-references',
    {
      schema: {
        tags: TAG,
        summary: 'Create a secret reference',
        description:
          'Stores where a secret lives in AWS Secrets Manager, Azure Key Vault or HashiCorp Vault and how to sign in; the secret itself is read by the gateway when needed and never stored.',
        body: createSecretReferenceBody,
        response: { 200: createdSecretReference },
      },
      config: { auth: auth('create'), audit: audit('create') },
    },
    async (request) => {
      const row = await service.create(request.principal!, request.body);
      request.auditResourceId = row.id;
      return { id: row.id, slug: row.slug, object: 'secret-reference' as const };
    },
  );

  app.get(
    '/v1/secret-references/:id',
    {
      schema: {
        tags: TAG,
        summary: 'Get a secret reference (auth_config secrets masked)',
        params: secretReferenceParams,
        response: { 200: secretReferenceObject },
      },
      config: { auth: auth('read') },
    },
    async (request) => service.get(request.principal!, request.params.id),
  );

  app.put(
    '/v1/secret-references/:id',
    {
      schema: {
        tags: TAG,
        summary: 'Update a secret reference',
        description:
          'Narrowing allowed_workspaces below a workspace that uses the reference is refused (SECRET_REFERENCE_IN_USE).',
        params: secretReferenceParams,
        body: updateSecretReferenceBody,
        response: { 200: z.object({}) },
      },
      config: { auth: auth('update'), audit: audit('update') },
    },
    async (request) => {
      const row = await service.update(request.principal!, request.params.id, request.body);
      request.auditResourceId = row.id;
      return {};
    },
  );

  app.delete(
    '/v1/secret-references/:id',
    {
      schema: {
        tags: TAG,
        summary: 'Delete (archive) a secret reference',
        description:
          'Refused with 400 SECRET_REFERENCE_IN_USE while integrations, virtual keys or an API key rotation policy name it; the message lists them.',
        params: secretReferenceParams,
        response: { 200: z.object({}) },
      },
      config: { auth: auth('delete'), audit: audit('delete') },
    },
    async (request) => {
      const row = await service.archive(request.principal!, request.params.id);
      request.auditResourceId = row.id;
      return {};
    },
  );
}
