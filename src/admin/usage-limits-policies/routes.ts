import { z } from 'zod';
import type { ZodApp } from '../../http/zod-app.js';
import { BOTH_KEY_TYPES } from '../../http/route-config.js';
import { listBody } from '../shared/pagination.js';
import {
  createPolicyBody,
  entityObject,
  entityParams,
  getPolicyQuery,
  listEntitiesQuery,
  listPoliciesQuery,
  policyObject,
  policyParams,
  updatePolicyBody,
} from './schemas.js';
import type { UsageLimitPolicyService } from './service.js';

const TAG = ['Usage limits policies'];
const USAGE_LIMITS_POLICIES = ['usage_limits', 'policy'] as const;
const auth = (verb: string) => ({ scope: `usage_limits_policies.${verb}`, keyTypes: BOTH_KEY_TYPES });
const audit = (action: string) => ({ resourceType: 'usage_limits_policy', action });
const listOf = <T extends z.ZodType>(item: T) =>
  z.object({ object: z.literal('list'), total: z.number(), data: z.array(item) });

export function registerUsageLimitPolicyRoutes(app: ZodApp, service: UsageLimitPolicyService): void {
  app.get(
    '/v1/policies/usage-limits',
    {
      schema: {
        tags: TAG,
        summary: 'List usage limits policies',
        querystring: listPoliciesQuery,
        response: { 200: listOf(policyObject) },
      },
      config: { feature: USAGE_LIMITS_POLICIES, auth: auth('list') },
    },
    async (request) => {
      const { total, data } = await service.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.post(
    '/v1/policies/usage-limits',
    {
      schema: {
        tags: TAG,
        summary: 'Create a usage limits policy',
        body: createPolicyBody,
        response: { 200: z.object({ id: z.uuid(), object: z.literal('usage_limits_policy') }) },
      },
      config: { feature: USAGE_LIMITS_POLICIES, auth: auth('create'), audit: audit('create') },
    },
    async (request) => {
      const row = await service.create(request.principal!, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { id: row.id, object: 'usage_limits_policy' as const };
    },
  );

  app.get(
    '/v1/policies/usage-limits/:policyUsageLimitsId',
    {
      schema: {
        tags: TAG,
        summary: 'Get a usage limits policy',
        params: policyParams,
        querystring: getPolicyQuery,
        response: { 200: policyObject },
      },
      config: { feature: USAGE_LIMITS_POLICIES, auth: auth('read') },
    },
    async (request) =>
      service.get(request.principal!, request.params.policyUsageLimitsId, {
        includeUsage: request.query.include_usage === 'true',
      }),
  );

  app.put(
    '/v1/policies/usage-limits/:policyUsageLimitsId',
    {
      schema: {
        tags: TAG,
        summary: 'Update a usage limits policy',
        params: policyParams,
        body: updatePolicyBody,
        response: { 200: z.object({}) },
      },
      config: { feature: USAGE_LIMITS_POLICIES, auth: auth('update'), audit: audit('update') },
    },
    async (request) => {
      request.auditResourceId = request.params.policyUsageLimitsId;
      const row = await service.update(request.principal!, request.params.policyUsageLimitsId, request.body);
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );

  app.delete(
    '/v1/policies/usage-limits/:policyUsageLimitsId',
    {
      schema: {
        tags: TAG,
        summary: 'Archive a usage limits policy',
        description: 'Deleting archives the policy: it stops applying and stays readable.',
        params: policyParams,
        response: { 200: z.object({}) },
      },
      config: { feature: USAGE_LIMITS_POLICIES, auth: auth('delete'), audit: audit('delete') },
    },
    async (request) => {
      request.auditResourceId = request.params.policyUsageLimitsId;
      const row = await service.archive(request.principal!, request.params.policyUsageLimitsId);
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );

  app.get(
    '/v1/policies/usage-limits/:policyUsageLimitsId/entities',
    {
      schema: {
        tags: TAG,
        summary: 'List the entities of a usage limits policy',
        description:
          'One row per usage bucket of the current period, then the API keys and workspaces the conditions name that have no bucket yet (usage 0).',
        params: policyParams,
        querystring: listEntitiesQuery,
        response: { 200: listOf(entityObject) },
      },
      config: { feature: USAGE_LIMITS_POLICIES, auth: auth('read') },
    },
    async (request) => {
      const { total, data } = await service.listEntities(
        request.principal!,
        request.params.policyUsageLimitsId,
        request.query,
      );
      return listBody(data, total);
    },
  );

  app.put(
    '/v1/policies/usage-limits/:policyUsageLimitsId/entities/:entityId/reset',
    {
      schema: {
        tags: TAG,
        summary: "Reset an entity's usage",
        description: "Forgets the bucket's usage in the current period; entityId is its value key.",
        params: entityParams,
        response: { 200: z.object({}) },
      },
      config: { feature: USAGE_LIMITS_POLICIES, auth: auth('update'), audit: audit('reset_usage') },
    },
    async (request) => {
      request.auditResourceId = request.params.policyUsageLimitsId;
      const row = await service.resetEntity(
        request.principal!,
        request.params.policyUsageLimitsId,
        request.params.entityId,
      );
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );
}
