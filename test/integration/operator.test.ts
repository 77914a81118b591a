import { describe, expect, it } from 'vitest';
import { startGateway } from '../helpers/gateway.js';
import { startTestServer } from '../helpers/start-test-server.js';

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

const INFO = 30;

function parsed(lines: string[]): LogLine[] {
  return lines.map((line) => JSON.parse(line) as LogLine);
}

/** The access line is queued with the record after the response ends: wait for it. */
async function accessLinesOf(lines: string[], logId: string, count = 1): Promise<LogLine[]> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const found = parsed(lines).filter((line) => line.log_id === logId);
    if (found.length >= count) return found;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return parsed(lines).filter((line) => line.log_id === logId);
}

describe('access log', () => {
  it('writes one info line per gateway request with its summary and no secret', async () => {
    const g = await startGateway();
    const res = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-api-key': g.adminKey,
        'x-request-id': 'trace-me-42',
        ...g.viaMock,
      },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    const logId = res.headers.get('x-service-request-id')!;

    const lines = await accessLinesOf(g.logLines, logId);
    // Give a second (wrong) line the time to appear before asserting there is exactly one.
    await g.server.requestLogs.flush();
    expect(parsed(g.logLines).filter((line) => line.log_id === logId)).toHaveLength(1);
    const [line] = lines;
    expect(line).toMatchObject({
      level: INFO,
      request_id: 'trace-me-42',
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      provider: 'openai',
      model: 'gpt-4o-mini',
      total_tokens: expect.any(Number),
      cost: expect.any(Number),
      cost_currency: 'USD',
    });
    expect(line!.latency_ms).toEqual(expect.any(Number));
    expect(line!.total_tokens).toBeGreaterThan(0);
    expect(line!.cost).toBeGreaterThan(0);
    expect(line).not.toHaveProperty('error_code');
    // Neither the gateway key nor the provider key is in any line the server wrote.
    const everything = g.logLines.join('\n');
    expect(everything).not.toContain(g.adminKey);
    expect(everything).not.toContain('provider-secret-key');
  });

  it('names the error code of a failed request, and stays silent when access_log is off', async () => {
    const g = await startGateway();
    g.mock.behave({ kind: 'error', status: 429 }, { times: 1 });
    const failed = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-api-key': g.adminKey, ...g.viaMock },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(failed.status).toBe(429);
    await failed.text();
    const [line] = await accessLinesOf(g.logLines, failed.headers.get('x-service-request-id')!);
    // The same code as the stored record, which GET /v1/logs shows.
    const [record] = await g.logs(1);
    expect(record.error_code).toBe('UPSTREAM_ERROR');
    expect(line).toMatchObject({ level: INFO, status: 429, error_code: record.error_code });

    // Refused before the pipeline ran (validation): a line too, found by the client's request id.
    const invalid = await fetch(`${g.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-api-key': g.adminKey,
        'x-request-id': 'refused-1',
        ...g.viaMock,
      },
      body: JSON.stringify({ messages: [] }),
    });
    expect(invalid.status).toBe(400);
    await invalid.text();
    await g.logs(2);
    const refused = parsed(g.logLines).filter((l) => l.request_id === 'refused-1' && l.msg.startsWith('POST'));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ level: INFO, status: 400, path: '/v1/chat/completions' });
    expect(refused[0]!.error_code).toEqual(expect.any(String));

    const quiet = await startGateway({ env: { SVCGW_ACCESS_LOG: 'off' } });
    const ok = await fetch(`${quiet.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-api-key': quiet.adminKey, ...quiet.viaMock },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(ok.status).toBe(200);
    const logId = ok.headers.get('x-service-request-id')!;
    await quiet.logs(1); // the record was queued (and written)
    expect(parsed(quiet.logLines).filter((l) => l.log_id === logId || l.path === '/v1/chat/completions')).toEqual([]);
  });
});

describe('readiness', () => {
  const UNREACHABLE_REDIS = 'redis://127.0.0.1:1'; // nothing listens on port 1

  it('is 200 with its checks when the database answers and no Redis is configured', async () => {
    const t = await startTestServer();
    const res = await fetch(`${t.baseUrl}/v1/ready`); // no key: public, like /v1/health
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'not_configured' } });
  });

  it('is 200 with a Redis that answers', async () => {
    const t = await startTestServer({ env: { SVCGW_REDIS_URL: 'redis://127.0.0.1:6379' } });
    const res = await fetch(`${t.baseUrl}/v1/ready`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'ok' } });
  });

  it('is 503 naming Redis when it is unreachable and limits fail closed, while health stays 200', async () => {
    const t = await startTestServer({
      env: { SVCGW_REDIS_URL: UNREACHABLE_REDIS, SVCGW_LIMITS_ON_STORE_FAILURE: 'closed' },
    });
    const res = await fetch(`${t.baseUrl}/v1/ready`);
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { message: string; type: string; code: string; param: null } };
    expect(body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', type: 'api_error', param: null });
    expect(body.error.message).toMatch(/Redis/);
    expect(body.error.message).not.toContain('127.0.0.1:1'); // no connection detail to the public
    expect((await fetch(`${t.baseUrl}/v1/health`)).status).toBe(200);
  });

  it('stays 200 (redis: unreachable) when limits fail open, since requests still pass', async () => {
    const t = await startTestServer({
      env: { SVCGW_REDIS_URL: UNREACHABLE_REDIS, SVCGW_LIMITS_ON_STORE_FAILURE: 'open' },
    });
    const res = await fetch(`${t.baseUrl}/v1/ready`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'unreachable' } });
  });

  it('is 503 when the database does not answer', async () => {
    const t = await startTestServer();
    // The one way to make SQLite stop answering from outside without killing the process.
    await t.server.db.destroy();
    const res = await fetch(`${t.baseUrl}/v1/ready`);
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/database/);
  });
});
