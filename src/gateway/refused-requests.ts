import { performance } from 'node:perf_hooks';
import type { Principal } from '../auth/principal.js';
import type { RequestLogWriter } from '../telemetry/request-log-writer.js';
import { RequestLogDraft } from './request-log-draft.js';

/**
 * Gateway requests refused before the pipeline ran (validation, authorisation, a refused path,
 * a body over the limit, shutdown) get a request log record too, so that a client's failures
 * show in GET /v1/logs like any others. The pipeline writes its own record; this module only
 * fills in for the requests it never saw.
 */
const handled = new WeakSet<object>();

/** Called as the pipeline takes a request over: from then on it writes the record. */
export function markHandled(request: object): void {
  handled.add(request);
}

export function wasHandled(request: object): boolean {
  return handled.has(request);
}

export interface RefusedRequest {
  principal: Principal;
  endpointType: string;
  method: string;
  /** The path as the client sent it, without the query. */
  path: string;
  requestId: string;
  status: number;
  errorCode: string | null;
  errorMessage: string | null;
  /** The model the body named, when it was parsed before the refusal (a validation 400). */
  model: string | null;
  /** When the request arrived (the clock's milliseconds) and its `performance.now()` then. */
  startedAt: number;
  startedPerf: number;
}

/** Queues the record of a refused gateway request; the workspace lookup is the only wait. */
export function logRefusedRequest(
  logs: RequestLogWriter,
  defaultWorkspaceId: (organisationId: string) => Promise<string>,
  refused: RefusedRequest,
): void {
  const { principal } = refused;
  const record = (async () => {
    const workspaceId = principal.workspaceId ?? (await defaultWorkspaceId(principal.organisationId));
    const draft = new RequestLogDraft(
      principal,
      workspaceId,
      refused.endpointType,
      refused.method,
      refused.path,
      refused.requestId,
      refused.startedAt,
      refused.startedPerf,
    );
    draft.errorCode = refused.errorCode;
    draft.errorMessage = refused.errorMessage;
    draft.model = refused.model;
    return draft.finish(refused.status, performance.now());
  })();
  logs.enqueueWhenReady(record);
}
