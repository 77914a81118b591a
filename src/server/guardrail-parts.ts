import type { Config } from '../config/schema.js';
import type { Clock } from '../lib/clock.js';
import type { Db } from '../storage/database.js';
import type { Logger } from '../telemetry/logger.js';
import { createFeedbackStore } from '../admin/observability/index.js';
import type { GatewayGuardrails } from '../gateway/guardrails/request-guard.js';
import type { GuardrailLookup } from '../guardrails/store/index.js';

/**
 * What the gateway needs to run guardrails: the lookup, the operator's network settings for
 * checks, and feedback written on the trace off the hot path.
 */
export function gatewayGuardrails(
  deps: { config: Config; db: Db; clock: Clock; logger: Logger },
  lookup: GuardrailLookup,
): GatewayGuardrails {
  const feedback = createFeedbackStore(deps.db);
  const hosts = deps.config.guardrails_private_hosts
    .split(',')
    .map((host) => host.trim())
    .filter(Boolean);
  return {
    lookup,
    clock: deps.clock,
    server: {
      allowPrivateContentUrls: deps.config.guardrails_allow_private_content_urls,
      allowPrivateCheckEndpoints: deps.config.guardrails_allow_private_check_endpoints,
      privateHostAllowlist: hosts,
    },
    recordFeedback(entry) {
      const now = new Date(deps.clock.now()).toISOString();
      feedback
        .create(
          {
            organisation_id: entry.organisationId,
            workspace_id: entry.workspaceId,
            api_key_id: entry.apiKeyId,
            trace_id: entry.traceId,
            value: Math.max(-10, Math.min(10, Math.round(entry.value))),
            weight: Math.max(0, Math.min(1, entry.weight)),
            metadata: JSON.stringify(entry.metadata),
          },
          now,
        )
        .catch((error: unknown) => deps.logger.warn({ err: error }, 'guardrail feedback could not be written'));
    },
  };
}
