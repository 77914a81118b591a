import type { FastifyInstance } from 'fastify';
import type { FeatureFlags } from '../../features/flags.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { redactSecrets } from '../../lib/redact.js';
import type { AuditLogRepository } from '../../storage/repositories/audit-logs.js';

/**
 * Writes one audit record per control-plane mutation made by an authenticated caller,
 * including refused ones (the status says which). It runs before the response is sent, so a
 * client that sees the answer can also see its record. With AUDIT_LOGS_ENABLED=OFF nothing is
 * recorded at all.
 */
export function registerAudit(app: FastifyInstance, deps: { repo: AuditLogRepository; clock: Clock; features: FeatureFlags }): void {
  if (!deps.features.enabled('audit_logs')) return;
  app.addHook('onSend', async (request, reply, payload) => {
    const audit = request.routeOptions.config.audit;
    const principal = request.principal;
    if (!audit || !principal) return payload;
    const body = request.body === undefined || request.body === null ? null : JSON.stringify(redactSecrets(request.body, audit.secretFields));
    const query = request.query && Object.keys(request.query).length > 0 ? JSON.stringify(redactSecrets(request.query)) : null;
    await deps.repo.insert({
      id: newId(),
      organisation_id: principal.organisationId,
      workspace_id: request.auditWorkspaceId ?? principal.workspaceId,
      timestamp: new Date(deps.clock.now()).toISOString(),
      actor_type: 'api_key',
      actor_key_id: principal.keyId,
      actor_user_id: principal.userId,
      action: audit.action,
      resource_type: audit.resourceType,
      resource_id: request.auditResourceId,
      method: request.method,
      path: request.url.split('?')[0] ?? request.url,
      query,
      request_body: body,
      response_status_code: reply.statusCode,
      client_ip: request.ip,
      request_id: request.id,
    });
    return payload;
  });
}
