import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { ZodApp } from '../../http/zod-app.js';
import type { PromptRow } from '../../storage/repositories/prompts.js';
import { promptAuth } from './prompt-auth.js';
import { makeDefaultBody, versionLabelBody } from './schemas.js';
import type { TemplateLifecycle } from './template-lifecycle.js';

type LifecycleService = Pick<TemplateLifecycle, 'archive' | 'setVersionLabel' | 'makeDefault'>;

export interface LifecycleRoutes {
  /** `/v1/prompts` or `/v1/prompts/partials`. */
  base: string;
  /** The path parameter naming the prompt or partial. */
  param: string;
  params: z.ZodObject;
  versionParams: z.ZodObject;
  tags: string[];
  resourceType: string;
  summaries: { archive: string; label: string; makeDefault: string };
  descriptions: { archive: string; label: string };
}

/**
 * The routes prompts and partials share (archive, label a version, choose the default version);
 * each answers `{}` and names the changed row in the audit record.
 */
export function registerTemplateLifecycleRoutes(app: ZodApp, spec: LifecycleRoutes, service: LifecycleService): void {
  const audit = (action: string) => ({ resourceType: spec.resourceType, action });
  const path = `${spec.base}/:${spec.param}`;
  const ref = (params: unknown) => (params as Record<string, string>)[spec.param]!;
  const audited = (request: FastifyRequest, row: PromptRow) => {
    request.auditResourceId = row.id;
    request.auditWorkspaceId = row.workspace_id;
    return {};
  };

  app.delete(
    path,
    {
      schema: {
        tags: spec.tags,
        summary: spec.summaries.archive,
        description: spec.descriptions.archive,
        params: spec.params,
        response: { 200: z.object({}) },
      },
      config: { auth: promptAuth('delete'), audit: audit('delete') },
    },
    async (request) => audited(request, await service.archive(request.principal!, ref(request.params))),
  );

  app.put(
    `${path}/versions/:versionId`,
    {
      schema: {
        tags: spec.tags,
        summary: spec.summaries.label,
        description: spec.descriptions.label,
        params: spec.versionParams,
        body: versionLabelBody,
        response: { 200: z.object({}) },
      },
      config: { auth: promptAuth('update'), audit: audit('label') },
    },
    async (request) => {
      const { versionId } = request.params as { versionId: string };
      const row = await service.setVersionLabel(
        request.principal!,
        ref(request.params),
        versionId,
        request.body.label_id,
      );
      return audited(request, row);
    },
  );

  app.put(
    `${path}/makeDefault`,
    {
      schema: {
        tags: spec.tags,
        summary: spec.summaries.makeDefault,
        params: spec.params,
        body: makeDefaultBody,
        response: { 200: z.object({}) },
      },
      config: { auth: promptAuth('update'), audit: audit('make_default') },
    },
    async (request) =>
      audited(request, await service.makeDefault(request.principal!, ref(request.params), request.body.version)),
  );
}
