import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FeatureFlags } from '../../features/flags.js';
import { clientCountry } from '../../lib/client-country.js';
import type { Clock } from '../../lib/clock.js';
import { errorBody } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { redactSecrets, safeJson } from '../../lib/redact.js';
import type { Db } from '../../storage/database.js';
import type { AuditLogRepository, AuditRecord } from '../../storage/repositories/audit-logs.js';
import { abandon, commitWith, undoWith, type RequestTransaction } from '../../storage/request-transaction.js';
import { addTransactionHooks } from '../route-hooks.js';

const transactions = new WeakMap<FastifyRequest, RequestTransaction>();

/**
 * Writes one audit record per control-plane mutation made by an authenticated caller,
 * including refused ones (the status says which), before the response is sent.
 *
 * The mutation and its record commit together or not at all: an audited route's handler runs
 * inside a database transaction begun just before it (see storage/request-transaction.ts), the
 * record is written in that transaction, and only then is it committed. A refused request's
 * writes are undone and its record committed alone. Should the record fail to be written, the
 * mutation is undone too and the client gets a 500 instead of the handler's answer.
 * With AUDIT_LOGS_ENABLED=OFF nothing is recorded and no transaction is opened. Dry runs
 * (`x-service-dry-run: true`) are not recorded: they change nothing.
 */
export function registerAudit(
  app: FastifyInstance,
  deps: { repo: AuditLogRepository; db: Db; clock: Clock; features: FeatureFlags },
): void {
  if (!deps.features.enabled('audit_logs')) return;

  // Only audited routes begin a transaction: the hooks are theirs alone, so that gateway requests
  // run none of them.
  app.addHook('onRoute', (route) => {
    if (!route.config?.audit) return;
    addTransactionHooks(route, {
      db: deps.db,
      transactions,
      wanted: (request) => Boolean(request.principal) && !request.dryRun,
      onAbandonFailed: (request, error) =>
        request.log.error({ err: error }, 'undoing an unfinished request transaction failed'),
    });
  });

  // Global, not per route: a request refused before its route's hooks run (authenticated, then a
  // refused path or body) is recorded too, and the record is committed before the caches hear of
  // the change (build-app.ts). Callback-style: on every other request it is one check, no promise.
  app.addHook('onSend', (request, reply, payload, done) => {
    // A dry run leaves no trace, no record included (server/dry-run.ts undoes it).
    if (!request.principal || request.dryRun) return done(null, payload);
    const audit = request.routeOptions.config.audit;
    if (!audit) return done(null, payload);
    recordAndFinish(request, reply, payload).then((sent) => done(null, sent), done);
  });

  async function recordAndFinish(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const tx = transactions.get(request);
    transactions.delete(request);
    let record: AuditRecord;
    try {
      record = auditRecord(request, reply, deps.clock);
    } catch (error) {
      // Not expected (building a record does not throw on any body), but never a change without its record.
      request.log.error({ err: error }, 'audit record could not be built');
      if (!tx) return payload;
      await abandon(tx);
      return internalError(request, reply);
    }
    if (!tx) {
      // Refused before its handler ran (validation): nothing to undo, the record stands alone.
      await deps.repo
        .insert(record)
        .catch((error: unknown) =>
          request.log.error(
            { err: error, action: record.action },
            'audit record of a refused request could not be written',
          ),
        );
      return payload;
    }
    if (reply.statusCode >= 400) {
      await undoWith(tx, (conn) => deps.repo.insert(record, conn)).catch((error: unknown) =>
        request.log.error(
          { err: error, action: record.action },
          'audit record of a refused request could not be written',
        ),
      );
      return payload;
    }
    try {
      const failures = await commitWith(tx, (conn) => deps.repo.insert(record, conn));
      for (const error of failures)
        request.log.error({ err: error, action: record.action }, 'work after a committed change failed');
      return payload;
    } catch (error) {
      request.log.error(
        { err: error, action: record.action },
        'audit record could not be written; the change was undone',
      );
      return internalError(request, reply);
    }
  }
}

/** The record of a request. Never throws, whatever the body: it is redacted without recursion and serialised safely. */
function auditRecord(request: FastifyRequest, reply: FastifyReply, clock: Clock): AuditRecord {
  const audit = request.routeOptions.config.audit!;
  const principal = request.principal!;
  const query = request.query;
  return {
    id: newId(),
    organisation_id: principal.organisationId,
    workspace_id: request.auditWorkspaceId ?? principal.workspaceId,
    timestamp: new Date(clock.now()).toISOString(),
    // A session's records name the session in actor_key_id (its id), told apart by actor_type.
    actor_type: principal.via
      ? 'system'
      : principal.authMethod === 'jwt'
        ? 'jwt'
        : principal.authMethod === 'session'
          ? 'session'
          : 'api_key',
    actor_key_id: principal.via ? null : principal.keyId,
    actor_user_id: principal.userId,
    action: audit.action,
    resource_type: audit.resourceType,
    resource_id: request.auditResourceId,
    method: request.method,
    path: request.url.split('?')[0] ?? request.url,
    query: query && typeof query === 'object' && Object.keys(query).length > 0 ? safeJson(redactSecrets(query)) : null,
    request_body:
      request.body === undefined || request.body === null
        ? null
        : safeJson(redactSecrets(audit.recordBody ? audit.recordBody(request.body) : request.body, audit.secretFields)),
    response_status_code: reply.statusCode,
    client_ip: request.ip,
    country: clientCountry(request.headers),
    request_id: request.id,
  };
}

/** The one error body, in place of an answer whose change could not be recorded (and so was undone). */
function internalError(request: FastifyRequest, reply: FastifyReply): string {
  reply.code(500).type('application/json; charset=utf-8');
  reply.removeHeader('content-length');
  return JSON.stringify(errorBody('INTERNAL_ERROR', `Internal server error (request id ${request.id}).`, null));
}
