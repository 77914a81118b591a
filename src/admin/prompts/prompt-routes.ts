import { z } from 'zod';
import type { ZodApp } from '../../http/zod-app.js';
import { listBody } from '../shared/pagination.js';
import {
  createPromptBody,
  listPromptsQuery,
  promptObject,
  promptParams,
  promptSummary,
  promptVersionParams,
  promptVersionSummary,
  updatePromptBody,
} from './schemas.js';
import type { PromptService } from './prompt-service.js';
import { promptAuth } from './prompt-auth.js';
import { registerTemplateLifecycleRoutes } from './template-lifecycle-routes.js';

const TAG = ['Prompts'];
const audit = (action: string) => ({ resourceType: 'prompt', action });
const ACCESS =
  'Workspace members and managers need the security setting membersViewPrompts / managersViewPrompts to read, and membersWritePrompts / managersWritePrompts to write (403 ROLE_NOT_ALLOWED).';
const TEMPLATE =
  'A template that does not parse, or includes a partial the workspace lacks, is a 400 on `string`; see docs/prompts.md.';

export function registerPromptRoutes(app: ZodApp, service: PromptService): void {
  app.get(
    '/v1/prompts',
    {
      schema: {
        tags: TAG,
        summary: 'List prompts',
        description: ACCESS,
        querystring: listPromptsQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(promptSummary) }) },
      },
      config: { auth: promptAuth('list') },
    },
    async (request) => {
      const { total, data } = await service.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.post(
    '/v1/prompts',
    {
      schema: {
        tags: TAG,
        summary: 'Create a prompt (its version 1, the default)',
        description: `${TEMPLATE} ${ACCESS}`,
        body: createPromptBody,
        response: {
          200: z.object({ id: z.uuid(), slug: z.string(), version_id: z.uuid(), object: z.literal('prompt') }),
        },
      },
      config: { auth: promptAuth('create'), audit: audit('create') },
    },
    async (request) => {
      const { row, version } = await service.create(request.principal!, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { id: row.id, slug: row.slug, version_id: version.id, object: 'prompt' as const };
    },
  );

  app.get(
    '/v1/prompts/:promptId',
    {
      schema: {
        tags: TAG,
        summary: 'Get a prompt (id or slug) at its default version, or `{id}@{version|latest|label}`',
        description: ACCESS,
        params: promptParams,
        response: { 200: promptObject },
      },
      config: { auth: promptAuth('read') },
    },
    async (request) => service.get(request.principal!, request.params.promptId),
  );

  app.put(
    '/v1/prompts/:promptId',
    {
      schema: {
        tags: TAG,
        summary: 'Update a prompt: a changed template or setting is saved as a new version',
        description: `The new version is not the default until makeDefault. With \`patch: true\`, version fields left out (string, parameters, model, metadata, …) are taken from the latest version; without it they are unset and \`string\` is required. ${TEMPLATE}`,
        params: promptParams,
        body: updatePromptBody,
        response: { 200: z.object({ id: z.uuid(), slug: z.string(), prompt_version_id: z.uuid() }) },
      },
      config: { auth: promptAuth('update'), audit: audit('update') },
    },
    async (request) => {
      const { row, versionId } = await service.update(request.principal!, request.params.promptId, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { id: row.id, slug: row.slug, prompt_version_id: versionId };
    },
  );

  app.get(
    '/v1/prompts/:promptId/versions',
    {
      schema: {
        tags: TAG,
        summary: 'List the versions of a prompt (newest first)',
        params: promptParams,
        response: {
          200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(promptVersionSummary) }),
        },
      },
      config: { auth: promptAuth('read') },
    },
    async (request) => {
      const data = await service.listVersions(request.principal!, request.params.promptId);
      return listBody(data, data.length);
    },
  );

  app.get(
    '/v1/prompts/:promptId/versions/:versionId',
    {
      schema: {
        tags: TAG,
        summary: 'Get one version of a prompt (by id, number, `latest` or label)',
        params: promptVersionParams,
        response: { 200: promptObject },
      },
      config: { auth: promptAuth('read') },
    },
    async (request) => service.getVersion(request.principal!, request.params.promptId, request.params.versionId),
  );

  registerTemplateLifecycleRoutes(
    app,
    {
      base: '/v1/prompts',
      param: 'promptId',
      params: promptParams,
      versionParams: promptVersionParams,
      tags: TAG,
      resourceType: 'prompt',
      summaries: {
        archive: 'Archive a prompt',
        label: "Set or clear a version's label (versions are otherwise immutable)",
        makeDefault: 'Make a version the default (published) one',
      },
      descriptions: {
        archive: 'Archives: runs no longer find it, its slug is free, and it stays readable by id with its versions.',
        label: 'A label is on at most one version of a prompt: it moves here from any other version.',
      },
    },
    service,
  );
}
