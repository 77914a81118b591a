import { z } from 'zod';
import type { ZodApp } from '../../http/zod-app.js';
import { BOTH_KEY_TYPES } from '../../http/route-config.js';
import { listBody } from '../shared/pagination.js';
import {
  createGuardrailBody,
  guardrailObject,
  guardrailParams,
  guardrailSummary,
  guardrailVersionObject,
  listGuardrailsQuery,
  updateGuardrailBody,
} from './schemas.js';
import type { GuardrailService } from './service.js';

const TAG = ['Guardrails'];
const access = (verb: string) => ({
  auth: { scope: `guardrails.${verb}`, keyTypes: BOTH_KEY_TYPES },
  feature: 'guardrails' as const,
});
// Webhook and detector headers carry credentials under any name.
const audit = (action: string) => ({ resourceType: 'guardrail', action, secretFields: ['headers'] });
const CHECKS =
  'Each check id must be one svcgw runs (400 naming the check and listing the built-in ones otherwise) and its parameters must suit it; `param` names the field. `actions` also takes the `{onFail: "block", message}` spelling (see docs/guardrails.md).';

export function registerGuardrailRoutes(app: ZodApp, service: GuardrailService): void {
  app.get(
    '/v1/guardrails',
    {
      schema: {
        tags: TAG,
        summary: 'List guardrails',
        description:
          "A workspace key, or `workspace_id`, lists what the workspace can use: its own guardrails and the organisation's.",
        querystring: listGuardrailsQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(guardrailSummary) }) },
      },
      config: access('list'),
    },
    async (request) => {
      const { total, data } = await service.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.post(
    '/v1/guardrails',
    {
      schema: {
        tags: TAG,
        summary: 'Create a guardrail',
        description: `Without \`workspace_id\` an admin key makes an organisation guardrail (usable in every workspace); a workspace key makes one in its workspace. ${CHECKS}`,
        body: createGuardrailBody,
        response: {
          200: z.object({ id: z.uuid(), slug: z.string(), version_id: z.uuid(), object: z.literal('guardrail') }),
        },
      },
      config: { ...access('create'), audit: audit('create') },
    },
    async (request) => {
      const { row, version } = await service.create(request.principal!, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { id: row.id, slug: row.slug, version_id: version.id, object: 'guardrail' as const };
    },
  );

  app.get(
    '/v1/guardrails/:guardrailId',
    {
      schema: {
        tags: TAG,
        summary: 'Get a guardrail (id or slug) with its checks and actions',
        description: 'Secret-looking check parameters (a webhook’s Authorization header) are shown as [REDACTED].',
        params: guardrailParams,
        response: { 200: guardrailObject },
      },
      config: access('read'),
    },
    async (request) => service.get(request.principal!, request.params.guardrailId),
  );

  app.put(
    '/v1/guardrails/:guardrailId',
    {
      schema: {
        tags: TAG,
        summary: 'Update a guardrail (saved as a new version)',
        description: `A [REDACTED] parameter sent back keeps the stored value. ${CHECKS}`,
        params: guardrailParams,
        body: updateGuardrailBody,
        response: { 200: z.object({ id: z.uuid(), slug: z.string(), version_id: z.uuid() }) },
      },
      config: { ...access('update'), audit: audit('update') },
    },
    async (request) => {
      const { row, version } = await service.update(request.principal!, request.params.guardrailId, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { id: row.id, slug: row.slug, version_id: version.id };
    },
  );

  app.delete(
    '/v1/guardrails/:guardrailId',
    {
      schema: {
        tags: TAG,
        summary: 'Archive a guardrail',
        description:
          'Archives: configs naming it no longer find it, its slug is free, and it stays readable with its versions. Answers 200 with no body.',
        params: guardrailParams,
      },
      config: { ...access('delete'), audit: audit('delete') },
    },
    async (request, reply) => {
      const row = await service.archive(request.principal!, request.params.guardrailId);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return reply.code(200).send();
    },
  );

  app.get(
    '/v1/guardrails/:guardrailId/versions',
    {
      schema: {
        tags: TAG,
        summary: 'List the versions of a guardrail (newest first)',
        params: guardrailParams,
        response: {
          200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(guardrailVersionObject) }),
        },
      },
      config: access('read'),
    },
    async (request) => {
      const data = await service.listVersions(request.principal!, request.params.guardrailId);
      return listBody(data, data.length);
    },
  );
}
