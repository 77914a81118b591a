import type { RequestLogInsert } from '../storage/repositories/request-logs.js';
import type { Logger } from './logger.js';

/**
 * The access line of one gateway request: what an operator tails to see traffic. Written when
 * the record is queued (after the response has ended), so it adds nothing to the request's time;
 * pino writes it asynchronously. It carries no body, header or key: only the record's summary.
 */
export function logAccess(logger: Logger, record: RequestLogInsert): void {
  if (!logger.isLevelEnabled('info')) return;
  const line = {
    request_id: record.request_id,
    log_id: record.id,
    method: record.method,
    path: record.path,
    status: record.status_code,
    latency_ms: record.latency_ms,
    provider: record.provider ?? null,
    model: record.model ?? null,
    prompt_tokens: record.prompt_tokens ?? null,
    completion_tokens: record.completion_tokens ?? null,
    total_tokens: record.total_tokens ?? null,
    cost: record.cost ?? null,
    cost_currency: record.cost_currency,
    cache: record.cache_status,
    ...(record.error_code ? { error_code: record.error_code } : {}),
  };
  logger.info(line, `${record.method} ${record.path} ${record.status_code} ${record.latency_ms}ms`);
}
