import { z } from 'zod';
import type { ZodApp } from '../../http/zod-app.js';
import { listBody } from '../shared/pagination.js';
import {
  collectionObject,
  collectionParams,
  collectionWithChildren,
  createCollectionBody,
  createLabelBody,
  labelObject,
  labelParams,
  labelQuery,
  listCollectionsQuery,
  listLabelsQuery,
  updateCollectionBody,
  updateLabelBody,
} from './catalog-schemas.js';
import type { CollectionService } from './collection-service.js';
import type { LabelService } from './label-service.js';
import { promptAuth } from './prompt-auth.js';

/** Prompt collections and labels: the folders and version labels of the prompts family. */
export function registerCatalogRoutes(
  app: ZodApp,
  services: { collections: CollectionService; labels: LabelService },
): void {
  const { collections, labels } = services;
  const collectionAudit = (action: string) => ({ resourceType: 'prompt_collection', action });
  const labelAudit = (action: string) => ({ resourceType: 'prompt_label', action });

  app.get(
    '/v1/collections',
    {
      schema: {
        tags: ['Collections'],
        summary: "List a workspace's prompt collections (the default one first)",
        querystring: listCollectionsQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(collectionObject) }) },
      },
      config: { auth: promptAuth('list') },
    },
    async (request) => {
      const { total, data } = await collections.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.post(
    '/v1/collections',
    {
      schema: {
        tags: ['Collections'],
        summary: 'Create a prompt collection',
        description: 'A child collection (`parent_collection_id`) is in its parent’s workspace.',
        body: createCollectionBody,
        response: { 200: z.object({ id: z.uuid(), slug: z.string(), object: z.literal('collection') }) },
      },
      config: { auth: promptAuth('create'), audit: collectionAudit('create') },
    },
    async (request) => {
      const row = await collections.create(request.principal!, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { id: row.id, slug: row.slug, object: 'collection' as const };
    },
  );

  app.get(
    '/v1/collections/:collectionId',
    {
      schema: {
        tags: ['Collections'],
        summary: 'Get a prompt collection (id or slug) with its child collections',
        params: collectionParams,
        response: { 200: collectionWithChildren },
      },
      config: { auth: promptAuth('read') },
    },
    async (request) => collections.get(request.principal!, request.params.collectionId),
  );

  app.put(
    '/v1/collections/:collectionId',
    {
      schema: {
        tags: ['Collections'],
        summary: 'Rename a prompt collection',
        params: collectionParams,
        body: updateCollectionBody,
        response: { 200: z.object({}) },
      },
      config: { auth: promptAuth('update'), audit: collectionAudit('update') },
    },
    async (request) => {
      const row = await collections.rename(request.principal!, request.params.collectionId, request.body.name);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );

  app.delete(
    '/v1/collections/:collectionId',
    {
      schema: {
        tags: ['Collections'],
        summary: 'Delete (archive) an empty prompt collection',
        description:
          'The default collection, and a collection that still holds prompts, partials or collections, answer 409 CONFLICT.',
        params: collectionParams,
        response: { 200: z.object({}) },
      },
      config: { auth: promptAuth('delete'), audit: collectionAudit('delete') },
    },
    async (request) => {
      const row = await collections.archive(request.principal!, request.params.collectionId);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );

  app.get(
    '/v1/labels',
    {
      schema: {
        tags: ['Labels'],
        summary: 'List prompt labels (organisation labels and those of the workspace)',
        querystring: listLabelsQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(labelObject) }) },
      },
      config: { auth: promptAuth('list') },
    },
    async (request) => {
      const { total, data } = await labels.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.post(
    '/v1/labels',
    {
      schema: {
        tags: ['Labels'],
        summary: 'Create a prompt label',
        description:
          'A name cannot be `latest`, `default` or a number, nor hold `@` or spaces, and must not clash with a label the same workspaces see (409).',
        body: createLabelBody,
        response: { 200: z.object({ id: z.uuid(), object: z.literal('label') }) },
      },
      config: { auth: promptAuth('create'), audit: labelAudit('create') },
    },
    async (request) => {
      const row = await labels.create(request.principal!, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { id: row.id, object: 'label' as const };
    },
  );

  app.get(
    '/v1/labels/:labelId',
    {
      schema: {
        tags: ['Labels'],
        summary: 'Get a prompt label',
        params: labelParams,
        querystring: labelQuery,
        response: { 200: labelObject },
      },
      config: { auth: promptAuth('read') },
    },
    async (request) => labels.get(request.principal!, request.params.labelId, request.query),
  );

  app.put(
    '/v1/labels/:labelId',
    {
      schema: {
        tags: ['Labels'],
        summary: 'Update a prompt label',
        description: 'Universal labels (production, staging, development) cannot be changed (409).',
        params: labelParams,
        body: updateLabelBody,
        response: { 200: z.object({}) },
      },
      config: { auth: promptAuth('update'), audit: labelAudit('update') },
    },
    async (request) => {
      const row = await labels.update(request.principal!, request.params.labelId, request.body);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );

  app.delete(
    '/v1/labels/:labelId',
    {
      schema: {
        tags: ['Labels'],
        summary: 'Delete (archive) a prompt label; versions carrying it lose it',
        description: 'Universal labels cannot be deleted (409).',
        params: labelParams,
        response: { 200: z.object({}) },
      },
      config: { auth: promptAuth('delete'), audit: labelAudit('delete') },
    },
    async (request) => {
      const row = await labels.archive(request.principal!, request.params.labelId);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return {};
    },
  );
}
