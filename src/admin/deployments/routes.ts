import { z } from 'zod';
import { ADMIN_ONLY, ORG_ADMINS } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { listBody } from '../shared/pagination.js';
import {
  createDeploymentBody,
  deploymentDetail,
  deploymentObject,
  deploymentParams,
  listDeploymentsQuery,
  updateDeploymentBody,
} from './schemas.js';
import type { DeploymentService } from './service.js';

const TAG = ['Deployments'];
const auth = (verb: string) => ({ scope: `deployments.${verb}`, keyTypes: ADMIN_ONLY, roles: ORG_ADMINS });
const audit = (action: string) => ({ resourceType: 'deployment', action });

export function registerDeploymentRoutes(app: ZodApp, service: DeploymentService): void {
  app.get(
    '/v1/deployments',
    {
      schema: {
        tags: TAG,
        summary: 'List deployments',
        description: '`type` keeps deployments of one type (production or non-production).',
        querystring: listDeploymentsQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(deploymentObject) }) },
      },
      config: { auth: auth('list') },
    },
    async (request) => {
      const { total, data } = await service.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.post(
    '/v1/deployments',
    {
      schema: {
        tags: TAG,
        summary: 'Create a deployment',
        description:
          'A deployment is a named group of gateway instances: `svcgw serve --deployment <slug>` joins one. Its config, limits and allowed workspaces apply to the traffic its instances serve (docs/deployments.md).',
        body: createDeploymentBody,
        response: { 200: z.object({ id: z.uuid(), slug: z.string(), object: z.literal('deployment') }) },
      },
      config: { auth: auth('create'), audit: audit('create') },
    },
    async (request) => {
      const row = await service.create(request.principal!, request.body);
      request.auditResourceId = row.id;
      return { id: row.id, slug: row.slug, object: 'deployment' as const };
    },
  );

  app.get(
    '/v1/deployments/:deploymentId',
    {
      schema: {
        tags: TAG,
        summary: 'Get a deployment with its instances',
        description:
          'Instances are listed as they look now: `active` while they heartbeat, `gone` after 3 missed heartbeats, `stopped` after a clean shutdown, `refused` when their registration was turned down (too old a version).',
        params: deploymentParams,
        response: { 200: deploymentDetail },
      },
      config: { auth: auth('read') },
    },
    async (request) => service.get(request.principal!, request.params.deploymentId),
  );

  app.put(
    '/v1/deployments/:deploymentId',
    {
      schema: {
        tags: TAG,
        summary: 'Update a deployment',
        description:
          'The slug cannot change (instances join by it). Running instances apply the change within seconds.',
        params: deploymentParams,
        body: updateDeploymentBody,
        response: { 200: z.object({}) },
      },
      config: { auth: auth('update'), audit: audit('update') },
    },
    async (request) => {
      const row = await service.update(request.principal!, request.params.deploymentId, request.body);
      request.auditResourceId = row.id;
      return {};
    },
  );

  app.delete(
    '/v1/deployments/:deploymentId',
    {
      schema: {
        tags: TAG,
        summary: 'Delete (archive) a deployment',
        description:
          'Archives the deployment and frees its slug; it stays readable. Refused (409) while live instances serve it.',
        params: deploymentParams,
        response: { 200: z.object({}) },
      },
      config: { auth: auth('delete'), audit: audit('delete') },
    },
    async (request) => {
      const row = await service.archive(request.principal!, request.params.deploymentId);
      request.auditResourceId = row.id;
      return {};
    },
  );
}
