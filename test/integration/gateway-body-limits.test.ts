import { describe, expect, it } from 'vitest';
import { startGateway, type GatewayHarness } from '../helpers/gateway.js';
import { openRequest } from '../helpers/raw-http.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

const MB = 1024 * 1024;
const BOUNDARY = 'edge-boundary';

function head(g: GatewayHarness, method: string, path: string, headers: Record<string, string>): string {
  const all = { host: 'localhost', 'x-service-api-key': g.adminKey, ...g.viaMock, ...headers };
  return `${method} ${path} HTTP/1.1\r\n${Object.entries(all)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
}

describe('gateway: max_body_bytes applies to every route', () => {
  it('a declared 300 MB Content-Length is refused with 413 before any of the body is sent, on every kind of route', async () => {
    const g = await startGateway();
    const routes: Array<[string, string]> = [
      ['/v1/chat/completions', 'application/json'],
      ['/v1/audio/transcriptions', `multipart/form-data; boundary=${BOUNDARY}`],
      ['/v1/files', `multipart/form-data; boundary=${BOUNDARY}`],
      ['/v1/workspaces', 'application/json'],
    ];
    for (const [path, type] of routes) {
      const request = openRequest(
        g.baseUrl,
        head(g, 'POST', path, { 'content-type': type, 'content-length': String(300 * MB), 'x-request-id': 'big-1' }),
      );
      // Not a byte of the body is written: the answer can only come from the declared length.
      const answer = await request.answer();
      expect(answer.status, path).toBe(413);
      expect(JSON.parse(answer.body).error, path).toMatchObject({
        code: 'PAYLOAD_TOO_LARGE',
        type: 'invalid_request_error',
      });
      expect(answer.headers['x-request-id'], path).toBe('big-1');
      expect(answer.headers.connection, path).toBe('close');
    }
    expect(g.mock.requests).toHaveLength(0);
    // The three gateway routes are logged for the key that sent them.
    const logs = await g.logs(3);
    expect(logs.map((l) => l.endpoint_type).sort()).toEqual(['chatComplete', 'createTranscription', 'proxy']);
    expect(logs.every((l) => l.status_code === 413 && l.error_code === 'PAYLOAD_TOO_LARGE')).toBe(true);
  });

  it('a 27 MB streamed body (multipart and pass-through) is cut at the limit: 413, and the provider sees an aborted request', async () => {
    const g = await startGateway();
    let aborted = 0;
    for (const path of ['/v1/audio/transcriptions', '/v1/files']) {
      const request = openRequest(
        g.baseUrl,
        head(g, 'POST', path, {
          'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
          'transfer-encoding': 'chunked',
        }),
      );
      const sent = await request.sendBody(27 * MB);
      const answer = await request.answer();
      expect(answer.status, path).toBe(413);
      expect(JSON.parse(answer.body).error.code, path).toBe('PAYLOAD_TOO_LARGE');
      expect(sent, path).toBeGreaterThan(25 * MB);
      await g.mock.waitForAborted(++aborted);
    }
    // The provider never received a whole request.
    expect(g.mock.requests).toHaveLength(0);
    const logs = await g.logs(2);
    expect(logs.every((l) => l.status_code === 413 && l.error_code === 'PAYLOAD_TOO_LARGE')).toBe(true);
  });

  it('a streamed body under the limit still goes through whole', async () => {
    const g = await startGateway({ env: { SVCGW_MAX_BODY_BYTES: String(2 * MB) } });
    const request = openRequest(
      g.baseUrl,
      head(g, 'POST', '/v1/files', {
        'content-type': 'application/octet-stream',
        'transfer-encoding': 'chunked',
        connection: 'close',
      }),
    );
    await request.sendBody(2 * MB, 256 * 1024);
    expect((await request.answer()).status).toBe(200);
    expect(g.mock.requests[0]!.body.length).toBe(2 * MB);
  });
});

describe('gateway: requests that arrive while the server is closing', () => {
  it('get our 503 body with x-request-id and a request log record', async () => {
    const adminKey = `edges-test-${'e'.repeat(30)}`;
    const g = await startGateway({ mock: { holdStream: true }, env: { SVCGW_BOOTSTRAP_ADMIN_KEY: adminKey } });
    const chat = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const json = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(chat)) };
    // A stream in flight keeps its keep-alive connection open while the server closes.
    const connection = openRequest(g.baseUrl, head(g, 'POST', '/v1/chat/completions', json) + chat);
    await connection.answered;
    const closing = g.close();
    await new Promise((resolve) => setImmediate(resolve));
    // The next request on that connection arrives after closing began.
    connection.write(head(g, 'POST', '/v1/chat/completions', { ...json, 'x-request-id': 'late-1' }) + chat);
    g.mock.releaseStreams();
    const text = await connection.text();
    await closing;

    const late = text.slice(text.indexOf('HTTP/1.1 503'));
    expect(late.startsWith('HTTP/1.1 503')).toBe(true);
    expect(late).toMatch(/x-request-id: late-1/i);
    const body = JSON.parse(late.slice(late.indexOf('\r\n\r\n') + 4));
    expect(body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', type: 'api_error' });

    const restarted = await startTestServer({ dataDir: g.dataDir, env: { SVCGW_BOOTSTRAP_ADMIN_KEY: adminKey } });
    const logs = await apiClient(restarted.baseUrl, adminKey).get('/v1/logs?page_size=10');
    expect(logs.body.data.map((l: { status_code: number }) => l.status_code).sort()).toEqual([200, 503]);
    expect(logs.body.data.find((l: { status_code: number }) => l.status_code === 503)).toMatchObject({
      request_id: 'late-1',
      error_code: 'SERVICE_UNAVAILABLE',
    });
  });
});
