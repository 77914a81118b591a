import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { migrateToLatest, openSqlite } from '../../../src/storage/database.js';
import { createRequestLogRepository, type RequestLogInsert } from '../../../src/storage/repositories/request-logs.js';
import { createLogger } from '../../../src/telemetry/logger.js';
import { createRequestLogWriter } from '../../../src/telemetry/request-log-writer.js';

async function repository() {
  const dir = mkdtempSync(join(tmpdir(), 'svcgw-log-writer-'));
  const db = openSqlite(dir);
  onTestFinished(async () => {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  await migrateToLatest(db);
  return createRequestLogRepository(db);
}

function record(i: number, body: string | null): RequestLogInsert {
  return {
    id: `log-${i}`,
    trace_id: `trace-${i}`,
    request_id: `req-${i}`,
    organisation_id: 'org',
    workspace_id: 'ws',
    api_key_id: 'key',
    provider: 'openai',
    credential_source: null,
    model: 'gpt-4o',
    endpoint_type: 'chatComplete',
    method: 'POST',
    path: '/v1/chat/completions',
    status_code: 200,
    is_success: 1,
    is_stream: 0,
    error_code: null,
    error_message: null,
    latency_ms: 1,
    ttfb_ms: 1,
    prompt_tokens: 1,
    completion_tokens: 1,
    cached_tokens: null,
    total_tokens: 2,
    cost: 0,
    cost_currency: 'USD',
    cache_status: 'DISABLED',
    metadata: null,
    request_body: body,
    response_body: body,
    created_at: '2026-11-24T00:00:00.000Z',
    config_id: null,
    attempts: null,
    retry_count: 0,
    span_id: null,
    parent_span_id: null,
    span_name: null,
    prompt_id: null,
    prompt_version: null,
    prompt_label: null,
    requested_model: 'gpt-4o',
    audio_seconds: null,
    hook_results: null,
    guardrail_verdict: null,
    mcp_server_id: null,
    mcp_tool: null,
    agent_server_id: null,
    rpc_method: null,
    request_bytes: null,
    response_bytes: null,
  };
}

const stored = async (repo: Awaited<ReturnType<typeof repository>>) =>
  (await repo.list({ organisationId: 'org', limit: 1000, offset: 0 })).total;

describe('the request log writer', () => {
  it('writes a batch as soon as its bodies pass the size bound, without waiting for the timer or the row count', async () => {
    const repo = await repository();
    // A timer that never fires during the test: only the bounds can start a write.
    const writer = createRequestLogWriter({
      repo,
      logger: createLogger({ level: 'silent', pretty: false }),
      flushIntervalMs: 60_000,
      batchChars: 100_000,
    });
    const body = 'x'.repeat(20_000);
    // Two bodies of 20,000 characters each per record: the third record passes 100,000.
    for (let i = 0; i < 3; i++) writer.enqueue(record(i, body));
    await vi.waitFor(async () => expect(await stored(repo)).toBe(3));
    expect(writer.pendingCount).toBe(0);

    // Small records wait for the timer (or the row count), as before.
    writer.enqueue(record(3, null));
    writer.enqueue(record(4, '{}'));
    expect(writer.pendingCount).toBe(2);
    await writer.flush();
    expect(await stored(repo)).toBe(5);
    const row = await repo.findById('org', 'log-1');
    expect(row?.request_body).toBe(body);
  });

  it('runs beforeWrite ahead of every batch (guardrail feedback is in the database before its logs)', async () => {
    const repo = await repository();
    const seen: number[] = [];
    const writer = createRequestLogWriter({
      repo,
      logger: createLogger({ level: 'silent', pretty: false }),
      flushIntervalMs: 60_000,
      beforeWrite: async () => void seen.push(await stored(repo)),
    });
    writer.enqueue(record(0, null));
    await writer.flush();
    await writer.flush(); // nothing pending: nothing to run first
    writer.enqueue(record(1, null));
    await writer.flush();
    expect(seen).toEqual([0, 1]);
    expect(await stored(repo)).toBe(2);
  });
});
