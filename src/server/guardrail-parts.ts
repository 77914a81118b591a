import type { Config } from '../config/schema.js';
import { isoAt, type Clock } from '../lib/clock.js';
import type { Db } from '../storage/database.js';
import type { Logger } from '../telemetry/logger.js';
import { createFeedbackStore } from '../admin/observability/index.js';
import { createFeedbackBatcher } from '../gateway/guardrails/feedback-batch.js';
import type { GatewayGuardrails } from '../gateway/guardrails/request-guard.js';
import type { GuardrailLookup } from '../guardrails/store/index.js';

/**
 * What the gateway needs to run guardrails: the lookup, the operator's network settings for
 * checks, and feedback written on the trace off the hot path.
 */
export function gatewayGuardrails(
  deps: { config: Config; db: Db; clock: Clock; logger: Logger },
  lookup: GuardrailLookup,
): GatewayGuardrails & { flushFeedback(): Promise<void> } {
  const store = createFeedbackStore(deps.db);
  const feedback = createFeedbackBatcher<Parameters<typeof store.createMany>[0][number]>({
    delayMs: deps.config.log_flush_interval_ms,
    writeMany: (rows) => store.createMany(rows),
    writeOne: (row) => store.createMany([row]),
    onError: (error) => deps.logger.warn({ err: error }, 'guardrail feedback could not be written'),
  });
  const hosts = deps.config.guardrails_private_hosts
    .split(',')
    .map((host) => host.trim())
    .filter(Boolean);
  return {
    /** Writes the feedback still queued: before each request-log batch, and on close so that none is lost. */
    flushFeedback: () => feedback.flush(),
    lookup,
    clock: deps.clock,
    server: {
      allowPrivateContentUrls: deps.config.guardrails_allow_private_content_urls,
      allowPrivateCheckEndpoints: deps.config.guardrails_allow_private_check_endpoints,
      privateHostAllowlist: hosts,
    },
    recordFeedback(entry) {
      feedback.add({
        organisation_id: entry.organisationId,
        workspace_id: entry.workspaceId,
        api_key_id: entry.apiKeyId,
        trace_id: entry.traceId,
        value: Math.max(-10, Math.min(10, Math.round(entry.value))),
        weight: Math.max(0, Math.min(1, entry.weight)),
        metadata: JSON.stringify(entry.metadata),
        created_at: isoAt(deps.clock.now()),
      });
    },
  };
}
