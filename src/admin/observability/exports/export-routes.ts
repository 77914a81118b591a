import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { Principal } from '../../../auth/principal.js';
import { AppError, notFound } from '../../../lib/errors.js';
import { isUuid, newId } from '../../../lib/ids.js';
import { BOTH_KEY_TYPES } from '../../../http/route-config.js';
import type { ZodApp } from '../../../http/zod-app.js';
import { idOrSlug, listBody, pageWindow, paginationQuery } from '../../shared/pagination.js';
import { resolveWorkspace } from '../../shared/workspace-access.js';
import type { ObservabilityDeps } from '../deps.js';
import type { ExportStatus } from '../tables.js';
import { csvStream } from './export-download.js';
import type { ExportFiles } from './export-files.js';
import { createExportLinks, EXPORT_LINK_TTL_MS } from './export-links.js';
import { EXPORT_FIELDS, type ExportField } from './export-fields.js';
import { countMatching, exportFilters, type ExportScope } from './export-filters.js';
import type { ExportRunner } from './export-runner.js';
import { createExportStore, toExportItem, type ExportRow } from './export-store.js';

const TAG = ['Logs Export'];
const access = { auth: { scope: 'logs.export', keyTypes: BOTH_KEY_TYPES }, feature: 'data_exports' as const };
const audited = (action: string) => ({ ...access, audit: { resourceType: 'log_export', action } });

const requestedData = z
  .array(z.enum(EXPORT_FIELDS))
  .min(1)
  .max(EXPORT_FIELDS.length)
  .refine((f) => new Set(f).size === f.length, 'requested_data lists a field twice');
const createBody = z
  .object({
    workspace_id: idOrSlug.optional(),
    filters: exportFilters,
    requested_data: requestedData,
    description: z.string().max(1000).optional(),
  })
  .strict();
const updateBody = z
  .object({
    workspace_id: idOrSlug.optional(),
    filters: exportFilters,
    requested_data: requestedData.optional(),
    description: z.string().max(1000).optional(),
  })
  .strict();
const params = z.object({ exportId: z.string().max(64) });
const createdResponse = z.object({ id: z.uuid(), total: z.number(), object: z.literal('export') });
const taskResponse = z.object({ message: z.string(), object: z.literal('export') });

/** Statuses from which an export can be started (again): a finished one is left as it is. */
const STARTABLE: readonly ExportStatus[] = ['draft', 'failed', 'stopped'];
const CANCELLABLE: readonly ExportStatus[] = ['draft', 'in_progress'];

/**
 * Log exports (DATA_EXPORTS_ENABLED, scope `logs.export`): a draft with filters and the fields
 * wanted, started to run in the background, then downloaded as JSONL or CSV. Workspace keys
 * reach the exports of their workspace; a caller limited to its own keys' logs exports only
 * those and sees only its own exports.
 */
export function registerExportRoutes(
  app: ZodApp,
  deps: ObservabilityDeps & { runner: ExportRunner; files: ExportFiles },
): void {
  const store = createExportStore(deps.db);
  const links = createExportLinks({ key: deps.secretBox.deriveKey('log export links'), clock: deps.clock });
  const now = () => new Date(deps.clock.now()).toISOString();

  async function scopeFor(principal: Principal, workspace: string | undefined): Promise<ExportScope> {
    const row = await resolveWorkspace(deps.repos.workspaces, principal, workspace, { required: false });
    return {
      organisationId: principal.organisationId,
      workspaceId: row?.id ?? null,
      ownerUserId: await deps.visibility.ownDataOnly(principal),
    };
  }

  /** 404 for another organisation's export, another workspace's (to a workspace key), or another user's (own data only). */
  async function reachable(principal: Principal, id: string): Promise<ExportRow> {
    const row = isUuid(id) ? await store.find(principal.organisationId, id) : undefined;
    if (!row) throw notFound('Export');
    if (principal.workspaceId !== null && row.workspace_id !== principal.workspaceId) throw notFound('Export');
    const ownerId = await deps.visibility.ownDataOnly(principal);
    if (ownerId !== null && row.created_by !== ownerId) throw notFound('Export');
    return row;
  }

  const conflict = (row: ExportRow, what: string) => new AppError('CONFLICT', `The export is ${row.status}; ${what}.`);

  app.post(
    '/v1/logs/exports',
    {
      schema: {
        tags: TAG,
        summary: 'Create a log export (a draft: start it to run)',
        body: createBody,
        response: { 200: createdResponse },
      },
      config: audited('create'),
    },
    async (request) => {
      const principal = request.principal!;
      const body = request.body;
      const scope = await scopeFor(principal, body.workspace_id);
      await deps.requestLogs.flush();
      const total = await countMatching(deps.db, scope, body.filters);
      const at = now();
      const row: ExportRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        workspace_id: scope.workspaceId,
        filters: JSON.stringify(body.filters),
        requested_data: JSON.stringify(body.requested_data),
        status: 'draft',
        description: body.description ?? null,
        created_by: principal.userId ?? principal.keyId,
        api_key_id: principal.keyId,
        owner_user_id: scope.ownerUserId,
        total,
        rows_written: 0,
        file_name: null,
        error: null,
        cursor_seq: 0,
        until_seq: 0,
        created_at: at,
        last_updated_at: at,
        started_at: null,
        finished_at: null,
      };
      await store.insert(row);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { id: row.id, total, object: 'export' as const };
    },
  );

  app.get(
    '/v1/logs/exports',
    {
      schema: {
        tags: TAG,
        summary: 'List log exports, newest first',
        querystring: z.object({ workspace_id: idOrSlug.optional(), ...paginationQuery }).strict(),
      },
      config: access,
    },
    async (request) => {
      const principal = request.principal!;
      const workspace = await resolveWorkspace(deps.repos.workspaces, principal, request.query.workspace_id, {
        required: false,
      });
      const ownerId = await deps.visibility.ownDataOnly(principal);
      const { total, rows } = await store.list({
        organisationId: principal.organisationId,
        workspaceId: workspace?.id,
        createdBy: ownerId ?? undefined,
        ...pageWindow(request.query),
      });
      return listBody(rows.map(toExportItem), total);
    },
  );

  app.get(
    '/v1/logs/exports/:exportId',
    {
      schema: { tags: TAG, summary: 'Get a log export: its status and progress', params },
      config: access,
    },
    async (request) => toExportItem(await reachable(request.principal!, request.params.exportId)),
  );

  app.put(
    '/v1/logs/exports/:exportId',
    {
      schema: {
        tags: TAG,
        summary: 'Change the filters or fields of an export',
        description: 'Not while it runs. A changed export is a draft again: its file, if any, is deleted.',
        params,
        body: updateBody,
        response: { 200: createdResponse },
      },
      config: audited('update'),
    },
    async (request) => {
      const principal = request.principal!;
      const row = await reachable(principal, request.params.exportId);
      if (row.status === 'in_progress') throw conflict(row, 'cancel it before changing it');
      const body = request.body;
      const scope =
        body.workspace_id === undefined
          ? { organisationId: row.organisation_id, workspaceId: row.workspace_id, ownerUserId: row.owner_user_id }
          : await scopeFor(principal, body.workspace_id);
      await deps.requestLogs.flush();
      const total = await countMatching(deps.db, scope, body.filters);
      const changed = await store.transition(row.id, ['draft', 'success', 'failed', 'stopped'], {
        status: 'draft',
        workspace_id: scope.workspaceId,
        filters: JSON.stringify(body.filters),
        ...(body.requested_data ? { requested_data: JSON.stringify(body.requested_data) } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        total,
        rows_written: 0,
        file_name: null,
        error: null,
        started_at: null,
        finished_at: null,
        last_updated_at: now(),
      });
      if (!changed) throw conflict(row, 'cancel it before changing it');
      await deps.files.remove(row.id);
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { id: row.id, total, object: 'export' as const };
    },
  );

  app.post(
    '/v1/logs/exports/:exportId/start',
    {
      schema: {
        tags: TAG,
        summary: 'Start (or restart) an export in the background',
        params,
        response: { 200: taskResponse },
      },
      config: audited('start'),
    },
    async (request) => {
      const row = await reachable(request.principal!, request.params.exportId);
      await deps.requestLogs.flush();
      const newest = await deps.db
        .selectFrom('request_logs')
        .select((eb) => eb.fn.max('seq').as('seq'))
        .executeTakeFirst();
      const at = now();
      const started = await store.transition(row.id, STARTABLE, {
        status: 'in_progress',
        until_seq: Number(newest?.seq ?? 0),
        cursor_seq: 0,
        rows_written: 0,
        error: null,
        file_name: null,
        started_at: at,
        finished_at: null,
        last_updated_at: at,
      });
      if (!started)
        throw conflict(
          row,
          row.status === 'success'
            ? 'it is complete: download it, or change it to run it again'
            : 'it is already running',
        );
      deps.runner.kick();
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { message: 'export started', object: 'export' as const };
    },
  );

  app.post(
    '/v1/logs/exports/:exportId/cancel',
    {
      schema: { tags: TAG, summary: 'Cancel an export that has not finished', params, response: { 200: taskResponse } },
      config: audited('cancel'),
    },
    async (request) => {
      const row = await reachable(request.principal!, request.params.exportId);
      const at = now();
      const cancelled = await store.transition(row.id, CANCELLABLE, {
        status: 'stopped',
        finished_at: at,
        last_updated_at: at,
      });
      if (!cancelled) throw conflict(row, 'only a draft or a running export can be cancelled');
      request.auditResourceId = row.id;
      request.auditWorkspaceId = row.workspace_id;
      return { message: 'export cancelled', object: 'export' as const };
    },
  );

  /** Streams a finished export's file in the format asked for. */
  async function sendFile(row: ExportRow, format: 'jsonl' | 'csv', reply: FastifyReply) {
    const jsonl = await deps.files.read(row.id);
    if (!jsonl) throw notFound('Export file');
    const csv = format === 'csv';
    reply
      .header('content-type', csv ? 'text/csv; charset=utf-8' : 'application/x-ndjson')
      .header('content-disposition', `attachment; filename="log-export-${row.id}.${csv ? 'csv' : 'jsonl'}"`)
      .header('cache-control', 'no-store');
    return reply.send(csv ? csvStream(jsonl, JSON.parse(row.requested_data) as ExportField[]) : jsonl);
  }

  const finished = (row: ExportRow): row is ExportRow & { finished_at: string } =>
    row.status === 'success' && row.file_name !== null && row.finished_at !== null;

  app.get(
    '/v1/logs/exports/:exportId/download',
    {
      schema: {
        tags: TAG,
        summary: 'Download a finished export: a signed link, or the file itself as JSONL or CSV',
        description: `Without \`format\`: \`{signed_url}\` (the reference's answer), a link that streams the JSONL file without an API key for ${EXPORT_LINK_TTL_MS / 60_000} minutes (add \`&format=csv\` to it for CSV). With \`format=jsonl\` (one JSON object per line) or \`format=csv\` (a header of the requested fields, objects as JSON text): the file itself.`,
        params,
        querystring: z.object({ format: z.enum(['jsonl', 'csv']).optional() }).strict(),
      },
      config: access,
    },
    async (request, reply) => {
      const row = await reachable(request.principal!, request.params.exportId);
      if (!finished(row)) throw conflict(row, 'only a finished (success) export can be downloaded');
      if (request.query.format) return sendFile(row, request.query.format, reply);
      const { token } = links.sign(row.id, row.finished_at);
      const base = deps.config.public_url?.replace(/\/+$/, '') ?? `${request.protocol}://${request.host}`;
      return { signed_url: `${base}/v1/logs/exports/${row.id}/file?token=${token}` };
    },
  );

  app.get(
    '/v1/logs/exports/:exportId/file',
    {
      schema: {
        tags: TAG,
        summary: 'The file of a finished export, by its signed link (no API key)',
        description:
          'The `signed_url` that `GET /v1/logs/exports/{exportId}/download` answers: `token` is checked (signed with the master key, for this run of the export) and works until it expires; `format=csv` for CSV. An altered, expired or outdated link is 403 INVALID_DOWNLOAD_LINK.',
        security: [],
        params,
        querystring: z
          .object({ token: z.string().max(200), format: z.enum(['jsonl', 'csv']).default('jsonl') })
          .strict(),
      },
      config: { auth: { public: true }, feature: 'data_exports' },
    },
    async (request, reply) => {
      const { exportId } = request.params;
      const row = isUuid(exportId) ? await store.findById(exportId) : undefined;
      // An unknown or unfinished export gets the same answer as a forged link: the link tells nothing.
      const check = row && finished(row) ? links.check(row.id, row.finished_at, request.query.token) : 'invalid';
      if (check === 'expired')
        throw new AppError('INVALID_DOWNLOAD_LINK', 'The download link has expired: ask GET /download for a new one.');
      if (check !== 'valid' || !row)
        throw new AppError(
          'INVALID_DOWNLOAD_LINK',
          'The download link is not valid: it was altered, or the export has changed since it was made.',
        );
      return sendFile(row, request.query.format, reply);
    },
  );
}
