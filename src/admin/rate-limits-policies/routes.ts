import { z } from 'zod';
import type { ZodApp } from '../../http/zod-app.js';
import { BOTH_KEY_TYPES } from '../../http/route-config.js';
import { listBody } from '../shared/pagination.js';
import { createPolicyBody, listPoliciesQuery, policyObject, policyParams, updatePolicyBody } from './schemas.js';
import type { RateLimitPolicyService } from './service.js';

const TAG = ['Rate limits policies'];
const auth = (verb: string) => ({ scope: `rate_limits_policies.${verb}`, keyTypes: BOTH_KEY_TYPES });
const audit = (action: string) => ({ resourceType: 'rate_limits_policy', action });

export function registerRateLimitPolicyRoutes(app: ZodApp, service: RateLimitPolicyService): void {
  app.get(
    '/v1/policies/rate-limits',
    {
      schema: {
        tags: TAG,
        summary: 'List rate limits policies',
        querystring: listPoliciesQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(policyObject) }) },
      },
      config: { feature: 'policy', auth: auth('list') },
    },
    async (request) => {
      const { total, data } = await service.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.post(
    '/v1/policies/rate-limits',
    {
      schema: {
        tags: TAG,
        summary: 'Create a rate limits policy',
        body: createPolicyBody,
        response: { 200: z.object({ id: z.uuid(), object: z.literal('rate_limits_policy') }) },
      },
      config: { feature: 'policy', auth: auth('create'), audit: audit('create') },
    },
    async (request) => {
      const row = await service.create(request.principal!, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { id: row.id, object: 'rate_limits_policy' as const };
    },
  );

  app.get(
    '/v1/policies/rate-limits/:rateLimitsPolicyId',
    {
      schema: { tags: TAG, summary: 'Get a rate limits policy', params: policyParams, response: { 200: policyObject } },
      config: { feature: 'policy', auth: auth('read') },
    },
    async (request) => service.get(request.principal!, request.params.rateLimitsPolicyId),
  );

  app.put(
    '/v1/policies/rate-limits/:rateLimitsPolicyId',
    {
      schema: {
        tags: TAG,
        summary: 'Update a rate limits policy',
        params: policyParams,
        body: updatePolicyBody,
        response: { 200: z.object({}) },
      },
      config: { feature: 'policy', auth: auth('update'), audit: audit('update') },
    },
    async (request) => {
      request.auditResourceId = request.params.rateLimitsPolicyId;
      const row = await service.update(request.principal!, request.params.rateLimitsPolicyId, request.body);
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );

  app.delete(
    '/v1/policies/rate-limits/:rateLimitsPolicyId',
    {
      schema: {
        tags: TAG,
        summary: 'Archive a rate limits policy',
        description: 'Deleting archives the policy: it stops applying and stays readable.',
        params: policyParams,
        response: { 200: z.object({}) },
      },
      config: { feature: 'policy', auth: auth('delete'), audit: audit('delete') },
    },
    async (request) => {
      request.auditResourceId = request.params.rateLimitsPolicyId;
      const row = await service.archive(request.principal!, request.params.rateLimitsPolicyId);
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );
}
