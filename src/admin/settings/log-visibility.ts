import type { Principal } from '../../auth/principal.js';
import type { Db } from '../../storage/database.js';
import type { RequestLogFilter } from '../../storage/repositories/request-logs.js';
import type { SecuritySettingsService } from './security-settings.js';

/**
 * Request logs limited to the API keys of one user: what a workspace member or manager sees
 * when data visibility (`membersViewAllData` / `managersViewAllData`) is off. The filters are
 * those of the request-log repository's `list`, plus the owner.
 */
export function createLogVisibility({ db, settings }: { db: Db; settings: Pick<SecuritySettingsService, 'ownDataOnly'> }) {
  const keysOf = (organisationId: string, userId: string) =>
    db.selectFrom('api_keys').select('id').where('organisation_id', '=', organisationId).where('user_id', '=', userId);

  return {
    /** The user whose keys' logs the caller is limited to, or null when it sees every log its key reaches. */
    ownDataOnly: (principal: Principal): Promise<string | null> => settings.ownDataOnly(principal),

    async list(filter: RequestLogFilter, userId: string) {
      let query = db.selectFrom('request_logs').where('organisation_id', '=', filter.organisationId).where('api_key_id', 'in', keysOf(filter.organisationId, userId));
      if (filter.workspaceId) query = query.where('workspace_id', '=', filter.workspaceId);
      if (filter.apiKeyId) query = query.where('api_key_id', '=', filter.apiKeyId);
      if (filter.provider) query = query.where('provider', '=', filter.provider);
      if (filter.model) query = query.where('model', '=', filter.model);
      if (filter.statusCode !== undefined) query = query.where('status_code', '=', filter.statusCode);
      if (filter.endpointType) query = query.where('endpoint_type', '=', filter.endpointType);
      if (filter.traceId) query = query.where('trace_id', '=', filter.traceId);
      if (filter.startTime) query = query.where('created_at', '>=', filter.startTime);
      if (filter.endTime) query = query.where('created_at', '<=', filter.endTime);
      const { total } = await query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      const rows = await query.selectAll().orderBy('seq', 'desc').limit(filter.limit).offset(filter.offset).execute();
      return { total: Number(total), rows };
    },

    /** Whether the key belongs to the user (revoked and expired keys included). */
    async ownsKey(organisationId: string, userId: string, apiKeyId: string): Promise<boolean> {
      return (await keysOf(organisationId, userId).where('id', '=', apiKeyId).executeTakeFirst()) !== undefined;
    },
  };
}

export type LogVisibility = ReturnType<typeof createLogVisibility>;
