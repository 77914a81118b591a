import { z } from 'zod';
import type { ZodApp } from '../../http/zod-app.js';
import { listBody } from '../shared/pagination.js';
import type { PartialService } from './partial-service.js';
import { promptAuth } from './prompt-auth.js';
import { registerTemplateLifecycleRoutes } from './template-lifecycle-routes.js';
import {
  createPartialBody,
  listPartialsQuery,
  partialObject,
  partialParams,
  partialVersionParams,
  partialSummary,
  partialVersionObject,
  updatePartialBody,
} from './schemas.js';

const TAG = ['PromptPartials'];
const audit = (action: string) => ({ resourceType: 'prompt_partial', action });

export function registerPartialRoutes(app: ZodApp, service: PartialService): void {
  app.get(
    '/v1/prompts/partials',
    {
      schema: {
        tags: TAG,
        summary: 'List prompt partials',
        querystring: listPartialsQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(partialSummary) }) },
      },
      config: { auth: promptAuth('list') },
    },
    async (request) => {
      const { total, data } = await service.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.post(
    '/v1/prompts/partials',
    {
      schema: {
        tags: TAG,
        summary: 'Create a prompt partial (included in templates as {{>slug}})',
        body: createPartialBody,
        response: {
          200: z.object({ id: z.uuid(), slug: z.string(), version_id: z.uuid(), object: z.literal('partial') }),
        },
      },
      config: { auth: promptAuth('create'), audit: audit('create') },
    },
    async (request) => {
      const { row, version } = await service.create(request.principal!, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { id: row.id, slug: row.slug, version_id: version.id, object: 'partial' as const };
    },
  );

  app.get(
    '/v1/prompts/partials/:promptPartialId',
    {
      schema: {
        tags: TAG,
        summary: 'Get a prompt partial (id or slug) at its default version',
        params: partialParams,
        response: { 200: partialObject },
      },
      config: { auth: promptAuth('read') },
    },
    async (request) => service.get(request.principal!, request.params.promptPartialId),
  );

  app.put(
    '/v1/prompts/partials/:promptPartialId',
    {
      schema: {
        tags: TAG,
        summary: 'Update a prompt partial: a new string is saved as a new version',
        description: 'The new version is not the default until makeDefault.',
        params: partialParams,
        body: updatePartialBody,
        response: { 200: z.object({ prompt_partial_version_id: z.uuid() }) },
      },
      config: { auth: promptAuth('update'), audit: audit('update') },
    },
    async (request) => {
      const { row, versionId } = await service.update(request.principal!, request.params.promptPartialId, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { prompt_partial_version_id: versionId };
    },
  );

  app.get(
    '/v1/prompts/partials/:promptPartialId/versions',
    {
      schema: {
        tags: TAG,
        summary: 'List the versions of a prompt partial (newest first)',
        params: partialParams,
        response: {
          200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(partialVersionObject) }),
        },
      },
      config: { auth: promptAuth('read') },
    },
    async (request) => {
      const data = await service.listVersions(request.principal!, request.params.promptPartialId);
      return listBody(data, data.length);
    },
  );

  registerTemplateLifecycleRoutes(
    app,
    {
      base: '/v1/prompts/partials',
      param: 'promptPartialId',
      params: partialParams,
      versionParams: partialVersionParams,
      tags: TAG,
      resourceType: 'prompt_partial',
      summaries: {
        archive: 'Archive a prompt partial',
        label: "Set or clear a partial version's label (svcgw), for {{>slug@label}}",
        makeDefault: 'Make a version of a partial the default one',
      },
      descriptions: {
        archive: 'Prompts that include it then fail to render (400 naming the partial) until it is restored.',
        label: 'A label is on at most one version of a partial: it moves here from any other version.',
      },
    },
    service,
  );
}
