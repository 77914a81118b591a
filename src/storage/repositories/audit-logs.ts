import type { Insertable } from 'kysely';
import type { Db } from '../database.js';
import type { AuditLogsTable } from '../schema.js';

export type AuditRecord = Insertable<AuditLogsTable>;

export interface AuditFilter {
  organisationId: string;
  startTime?: string;
  endTime?: string;
  userId?: string;
  apiKeyId?: string;
  workspaceId?: string;
  resourceType?: string;
  resourceId?: string;
  action?: string;
  method?: string;
  /** The path called, exactly (no query string). */
  uri?: string;
  requestId?: string;
  actorTypes?: readonly AuditLogsTable['actor_type'][];
  responseStatusCode?: number;
  clientIp?: string;
  country?: string;
  limit: number;
  offset: number;
}

export function createAuditLogRepository(db: Db) {
  return {
    /** `into` is the connection of the transaction the record belongs to (the mutation's own). */
    insert: (record: AuditRecord, into: Db = db) => into.insertInto('audit_logs').values(record).execute(),

    list: async (filter: AuditFilter) => {
      let query = db.selectFrom('audit_logs').where('organisation_id', '=', filter.organisationId);
      if (filter.startTime) query = query.where('timestamp', '>=', filter.startTime);
      if (filter.endTime) query = query.where('timestamp', '<=', filter.endTime);
      if (filter.userId) query = query.where('actor_user_id', '=', filter.userId);
      if (filter.apiKeyId) query = query.where('actor_key_id', '=', filter.apiKeyId);
      if (filter.workspaceId) query = query.where('workspace_id', '=', filter.workspaceId);
      if (filter.resourceType) query = query.where('resource_type', '=', filter.resourceType);
      if (filter.resourceId) query = query.where('resource_id', '=', filter.resourceId);
      if (filter.action) query = query.where('action', '=', filter.action);
      if (filter.method) query = query.where('method', '=', filter.method);
      if (filter.uri) query = query.where('path', '=', filter.uri);
      if (filter.requestId) query = query.where('request_id', '=', filter.requestId);
      if (filter.actorTypes) query = query.where('actor_type', 'in', filter.actorTypes);
      if (filter.responseStatusCode !== undefined)
        query = query.where('response_status_code', '=', filter.responseStatusCode);
      if (filter.clientIp) query = query.where('client_ip', '=', filter.clientIp);
      if (filter.country) query = query.where('country', '=', filter.country.toUpperCase());
      const { total } = await query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      const rows = await query.selectAll().orderBy('seq', 'desc').limit(filter.limit).offset(filter.offset).execute();
      return { total: Number(total), rows };
    },
  };
}

export type AuditLogRepository = ReturnType<typeof createAuditLogRepository>;
