import { connect } from 'node:net';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { validPolicy } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

/** Writes `text` on a new connection and reads everything until the server closes it. */
function rawExchange(baseUrl: string, text: string): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), hostname, () => socket.end(text));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
  });
}

const expectErrorBody = (body: any, code: string) => {
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(5);
};

describe('one error model', () => {
  it('answers malformed JSON with 400, another content type with 415 and an unknown route with 404', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const malformed = await admin.post('/v1/policies/rate-limits', '{"conditions": [', {
      'content-type': 'application/json',
    });
    expect(malformed.status).toBe(400);
    expectErrorBody(malformed.body, 'INVALID_JSON');
    const empty = await admin.call('POST', '/v1/policies/rate-limits', '', { 'content-type': 'application/json' });
    expect(empty.status).toBe(400);

    const form = await admin.post('/v1/policies/rate-limits', 'a=b', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(415);
    expectErrorBody(form.body, 'UNSUPPORTED_MEDIA_TYPE');
    const text = await admin.post('/v1/policies/rate-limits', JSON.stringify(validPolicy()), {
      'content-type': 'text/plain',
    });
    expect(text.status).toBe(415);

    const unknown = await admin.get('/v1/workspaces/a/b/c');
    expect(unknown.status).toBe(404);
    expectErrorBody(unknown.body, 'ROUTE_NOT_FOUND');
    expect(unknown.headers.get('x-request-id')).toMatch(/.+/);
    expect((await apiClient(t.baseUrl).get('/nowhere')).status).toBe(404);
  });

  it('answers headers over 16 KiB in the one error body with a request id, and logs the refusal', async () => {
    const t = await startTestServer();
    const res = await request(`${t.baseUrl}/v1/logs?model=${'q'.repeat(17_000)}`, {
      headers: { 'x-service-api-key': t.adminKey },
    });
    expect(res.statusCode).toBe(431);
    expectErrorBody(await res.body.json(), 'HEADERS_TOO_LARGE');
    const requestId = res.headers['x-request-id'];
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(t.logLines.some((line) => line.includes(String(requestId)) && line.includes('HEADERS_TOO_LARGE'))).toBe(
      true,
    );
    expect((await apiClient(t.baseUrl, t.adminKey).get('/v1/workspaces')).status).toBe(200);

    // HEAD gets the status and headers without the body (a client would read it as the next answer).
    const raw = await rawExchange(
      t.baseUrl,
      `HEAD /v1/logs HTTP/1.1\r\nhost: x\r\nx-service-api-key: ${t.adminKey}\r\nx-filler: ${'q'.repeat(17_000)}\r\n\r\n`,
    );
    expect(raw).toMatch(/^HTTP\/1\.1 431 /);
    expect(raw).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/);
    expect(raw.endsWith('\r\n\r\n')).toBe(true);
  });

  it('answers a body over the limit with 413', async () => {
    const t = await startTestServer({ env: { SVCGW_MAX_BODY_BYTES: '2048' } });
    const res = await request(`${t.baseUrl}/v1/policies/rate-limits`, {
      method: 'POST',
      headers: { 'x-service-api-key': t.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ ...validPolicy(), name: 'x'.repeat(5000) }),
    });
    expect(res.statusCode).toBe(413);
    expectErrorBody(await res.body.json(), 'PAYLOAD_TOO_LARGE');
  });

  it('keeps the client’s x-request-id when it is sane', async () => {
    const t = await startTestServer();
    const res = await apiClient(t.baseUrl).get('/v1/health', { 'x-request-id': 'trace-123' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('trace-123');
    const odd = await apiClient(t.baseUrl).get('/v1/health', { 'x-request-id': 'a b<c>' });
    expect(odd.headers.get('x-request-id')).not.toBe('a b<c>');
  });

  it('answers an unexpected failure with 500 and a generic message, details only in the server log', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    expect((await admin.get('/v1/workspaces')).status).toBe(200); // key now cached
    await t.server.db.schema.dropTable('rate_limit_policies').execute();
    const res = await admin.get('/v1/policies/rate-limits');
    expect(res.status).toBe(500);
    expectErrorBody(res.body, 'INTERNAL_ERROR');
    expect(res.body.error.message).not.toMatch(/rate_limit_policies|sqlite|table/i);
    const requestId = res.headers.get('x-request-id')!;
    expect(res.body.error.message).toContain(requestId);
    const logged = t.logLines.find((line) => line.includes(requestId));
    expect(logged).toMatch(/no such table: rate_limit_policies/);
  });

  it('answers health without a key', async () => {
    const t = await startTestServer();
    const res = await apiClient(t.baseUrl).get('/v1/health');
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ok');
  });
});
