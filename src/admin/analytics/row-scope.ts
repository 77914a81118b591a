import type { Principal } from '../../auth/principal.js';
import { AppError } from '../../lib/errors.js';
import type { ObservabilityDeps } from '../observability/deps.js';
import { governedRole } from '../settings/access.js';
import { resolveWorkspace } from '../shared/workspace-access.js';
import type { RowFilter } from './reader.js';
import { rowConditions } from './row-conditions.js';
import { foldSynonyms, parseMetadata, parseStatusCodes, timeWindow, type FilterQuery } from './params.js';

/**
 * The rows a caller may aggregate, from its query and who it is:
 * - analytics routes (`analytics: true`) refuse members and managers whose workspace turned
 *   membersViewAnalytics / managersViewAnalytics off (403 ROLE_NOT_ALLOWED); the grouped logs
 *   route does not, as /v1/logs does not;
 * - workspace keys see their own workspace only (another workspace_id is WORKSPACE_FORBIDDEN);
 * - with membersViewAllData / managersViewAllData off, only the caller's own keys' requests.
 * Figures read from request_logs rows rather than rollups (`readsLogs`) reach back
 * LOG_RETENTION_DISPLAY days, as metadata filters do.
 */
export async function rowFilter(
  deps: ObservabilityDeps,
  principal: Principal,
  given: FilterQuery,
  options: { analytics: boolean; readsLogs?: boolean },
): Promise<RowFilter> {
  const query = foldSynonyms(given);
  if (options.analytics && !(await deps.settings.canView(principal, 'analytics'))) {
    const setting = governedRole(principal) === 'manager' ? 'managersViewAnalytics' : 'membersViewAnalytics';
    throw new AppError(
      'ROLE_NOT_ALLOWED',
      `Analytics are turned off for your role in this workspace (security setting ${setting}).`,
    );
  }
  const metadata = parseMetadata(query.metadata);
  const rows = await rowConditions(deps.db, principal.organisationId, query);
  const window = timeWindow(
    query,
    deps.clock.now(),
    { logDays: deps.config.log_retention_display, metricsDays: deps.config.metrics_retention_display },
    { metadata: metadata !== undefined || rows.length > 0 || options.readsLogs === true },
  );
  const workspace = await resolveWorkspace(deps.repos.workspaces, principal, query.workspace_id, { required: false });
  const owner = await deps.visibility.ownDataOnly(principal);
  return {
    organisationId: principal.organisationId,
    ...window,
    workspaceId: workspace?.id,
    apiKeyId: query.api_key_id,
    visibleKeyIds: owner === null ? null : await keysOf(deps, principal.organisationId, owner),
    provider: query.provider,
    model: query.model,
    statusCodes: parseStatusCodes(query.status_code),
    guardrailVerdict: query.guardrail_verdict,
    metadata,
    rows,
  };
}

async function keysOf(deps: ObservabilityDeps, organisationId: string, userId: string): Promise<string[]> {
  const rows = await deps.db
    .selectFrom('api_keys')
    .select('id')
    .where('organisation_id', '=', organisationId)
    .where('user_id', '=', userId)
    .execute();
  return rows.map((row) => row.id);
}
