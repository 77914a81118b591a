import { z } from 'zod';
import { invalid } from '../../lib/errors.js';
import type { AuditLogRepository } from '../../storage/repositories/audit-logs.js';
import type { AuditLogsTable } from '../../storage/schema.js';
import { ADMIN_ONLY } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { listBody, pageWindow, paginationQuery } from '../shared/pagination.js';

const USER_TYPES = ['user', 'api_key', 'jwt', 'session', 'system'] as const;
/** The reference's `user` is a person: one signed in with SSO, or calling with their IdP's JWT. */
const ACTOR_TYPES: Record<(typeof USER_TYPES)[number], AuditLogsTable['actor_type'][]> = {
  user: ['session', 'jwt'],
  api_key: ['api_key'],
  jwt: ['jwt'],
  session: ['session'],
  system: ['system'],
};

const listAuditLogsQuery = z
  .object({
    start_time: z.iso.datetime({ offset: true }).optional(),
    end_time: z.iso.datetime({ offset: true }).optional(),
    user_id: z.uuid().optional(),
    api_key_id: z.uuid().optional().describe('The key, or the key id of a JWT caller (docs/jwt.md).'),
    workspace_id: z.uuid().optional(),
    resource_type: z.string().max(64).optional(),
    resource_id: z.string().max(64).optional(),
    action: z.string().max(64).optional(),
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).optional(),
    organisation_id: z
      .uuid()
      .optional()
      .describe(
        "The caller's organisation (the reference requires it; the key already names it, another one is a 400).",
      ),
    uri: z.string().max(2048).optional().describe('Only requests to this path, exactly, without its query string.'),
    request_id: z.string().max(128).optional().describe('Only the record of this request (its x-request-id).'),
    user_type: z
      .enum(USER_TYPES)
      .optional()
      .describe('Only this kind of actor; `user` is a person (session or jwt), as the reference names it.'),
    response_status_code: z.coerce.number().int().min(100).max(599).optional(),
    client_ip: z.string().max(64).optional(),
    country: z
      .string()
      .regex(/^[A-Za-z0-9]{2}$/, 'country must be a two-character code such as DE')
      .optional()
      .describe('Only requests whose proxy named this country (cf-ipcountry / x-country header).'),
    ...paginationQuery,
    page_size: paginationQuery.page_size.pipe(z.number().max(100)),
  })
  .strict();

const auditRecord = z.object({
  id: z.uuid(),
  timestamp: z.string(),
  organisation_id: z.uuid(),
  workspace_id: z.string().nullable(),
  user_type: z.enum(['api_key', 'system', 'jwt', 'session']),
  user_id: z.string().nullable(),
  api_key_id: z.string().nullable(),
  action: z.string(),
  resource_type: z.string(),
  resource_id: z.string().nullable(),
  method: z.string(),
  uri: z.string(),
  query_params: z.unknown(),
  request_body: z.unknown(),
  response_status_code: z.number(),
  client_ip: z.string().nullable(),
  country: z.string().nullable(),
  request_id: z.string(),
  /** Why an authentication was refused (failed JWTs); null on every other record. */
  detail: z.string().nullable(),
  object: z.literal('audit-log'),
});

const iso = (value: string | undefined) => (value === undefined ? undefined : new Date(value).toISOString());

export function registerAuditLogRoutes(app: ZodApp, repo: AuditLogRepository): void {
  app.get(
    '/v1/audit-logs',
    {
      schema: {
        tags: ['Audit logs'],
        summary: 'List audit records, newest first',
        querystring: listAuditLogsQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(auditRecord) }) },
      },
      config: { auth: { scope: 'audit_logs.list', keyTypes: ADMIN_ONLY }, feature: 'audit_logs' },
    },
    async (request) => {
      const q = request.query;
      if (q.organisation_id !== undefined && q.organisation_id !== request.principal!.organisationId)
        throw invalid(
          'organisation_id',
          "organisation_id must be your key's own organisation; an admin key reads only its organisation's audit log.",
        );
      const { total, rows } = await repo.list({
        organisationId: request.principal!.organisationId,
        startTime: iso(q.start_time),
        endTime: iso(q.end_time),
        userId: q.user_id,
        apiKeyId: q.api_key_id,
        workspaceId: q.workspace_id,
        resourceType: q.resource_type,
        resourceId: q.resource_id,
        action: q.action,
        method: q.method,
        uri: q.uri,
        requestId: q.request_id,
        actorTypes: q.user_type === undefined ? undefined : ACTOR_TYPES[q.user_type],
        responseStatusCode: q.response_status_code,
        clientIp: q.client_ip,
        country: q.country,
        ...pageWindow(q),
      });
      const data = rows.map((row) => ({
        id: row.id,
        timestamp: row.timestamp,
        organisation_id: row.organisation_id,
        workspace_id: row.workspace_id,
        user_type: row.actor_type,
        user_id: row.actor_user_id,
        api_key_id: row.actor_key_id,
        action: row.action,
        resource_type: row.resource_type,
        resource_id: row.resource_id,
        method: row.method,
        uri: row.path,
        query_params: row.query === null ? null : (JSON.parse(row.query) as unknown),
        request_body: row.request_body === null ? null : (JSON.parse(row.request_body) as unknown),
        response_status_code: row.response_status_code,
        client_ip: row.client_ip,
        country: row.country ?? null,
        request_id: row.request_id,
        detail: row.detail ?? null,
        object: 'audit-log' as const,
      }));
      return listBody(data, total);
    },
  );
}
