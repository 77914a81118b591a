import { randomBytes } from 'node:crypto';
import { connect, createServer, type Socket } from 'node:net';
import { request as httpRequest } from 'node:http';
import { request } from 'undici';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startGateway } from '../helpers/gateway.js';

/** A provider on loopback that answers every request with `answer`, written raw, then closes. */
async function rawProvider(answer: string): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let head = '';
    socket.on('data', (d: Buffer) => {
      head += d.toString('latin1');
      if (head.includes('\r\n\r\n')) socket.end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
}

describe('gateway: pass-through of any other provider endpoint', () => {
  it('forwards method, path, query, body bytes and content type, and returns the provider’s answer unchanged', async () => {
    const g = await startGateway();
    const body = randomBytes(4096); // not valid UTF-8 or JSON: bytes must survive as bytes
    for (const method of ['POST', 'PUT', 'DELETE', 'GET'] as const) {
      const res = await request(`${g.baseUrl}/v1/vector_stores/vs_123/files?limit=5&order=desc`, {
        method,
        headers: {
          'x-service-api-key': g.adminKey,
          ...g.viaMock,
          'content-type': 'application/x-custom',
          'x-custom-client': 'kept',
        },
        body: method === 'GET' ? null : body,
      });
      expect(res.statusCode).toBe(200);
      const echo = (await res.body.json()) as {
        method: string;
        path: string;
        headers: Record<string, string>;
        body_base64: string;
      };
      expect(echo.method).toBe(method);
      expect(echo.path).toBe('/v1/vector_stores/vs_123/files?limit=5&order=desc');
      expect(echo.headers['x-custom-client']).toBe('kept');
      expect(echo.headers.authorization).toBe('Bearer provider-secret-key');
      expect(Object.keys(echo.headers).filter((h) => h.startsWith('x-service-'))).toEqual([]);
      if (method !== 'GET') {
        expect(echo.headers['content-type']).toBe('application/x-custom');
        expect(Buffer.from(echo.body_base64, 'base64').equals(body)).toBe(true);
      }
    }
    const logs = await g.logs(4);
    expect(
      logs.every(
        (l: any) => l.endpoint_type === 'proxy' && l.status_code === 200 && l.path === '/v1/vector_stores/vs_123/files',
      ),
    ).toBe(true);
  });

  it('takes a client’s Expect: 100-continue itself and forwards the body without it', async () => {
    const g = await startGateway();
    const body = Buffer.from('{"file_id":"file_1"}');
    const res = await new Promise<{ status: number; json: any; continued: boolean }>((resolve, reject) => {
      let continued = false;
      const req = httpRequest(`${g.baseUrl}/v1/vector_stores/vs_123/files`, {
        method: 'POST',
        headers: {
          'x-service-api-key': g.adminKey,
          ...g.viaMock,
          'content-type': 'application/json',
          'content-length': String(body.length),
          expect: '100-continue',
        },
      });
      req.once('continue', () => {
        continued = true;
        req.end(body);
      });
      req.once('response', (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.once('end', () =>
          resolve({ status: answer.statusCode!, json: JSON.parse(Buffer.concat(chunks).toString()), continued }),
        );
      });
      req.once('error', reject);
    });
    expect(res.continued).toBe(true);
    expect(res.status).toBe(200);
    expect(res.json.headers.expect).toBeUndefined();
    expect(Buffer.from(res.json.body_base64, 'base64').equals(body)).toBe(true);
  });

  it('returns a binary body byte for byte, with the provider’s headers', async () => {
    const g = await startGateway();
    const direct = Buffer.from(await (await fetch(`${g.mock.baseUrl}/binary/70000`)).arrayBuffer());
    const res = await request(`${g.baseUrl}/v1/binary/70000`, {
      headers: { 'x-service-api-key': g.adminKey, ...g.viaMock },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers['x-mock-header']).toBe('yes');
    const viaGateway = Buffer.from(await res.body.arrayBuffer());
    expect(viaGateway.length).toBe(70000);
    expect(viaGateway.equals(direct)).toBe(true);
  });

  it('streams a multipart upload to the audio routes unchanged', async () => {
    const g = await startGateway();
    const form = new FormData();
    form.append('model', 'whisper-1');
    form.append('file', new Blob([randomBytes(2048)], { type: 'audio/mpeg' }), 'speech.mp3');
    const res = await fetch(`${g.baseUrl}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { 'x-service-api-key': g.adminKey, ...g.viaMock },
      body: form,
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { text: string }).text).toBeTruthy();
    const upstream = g.mock.requests[0]!;
    expect(upstream.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(upstream.body.includes(Buffer.from('name="model"'))).toBe(true);
    expect((await g.logs(1))[0].endpoint_type).toBe('createTranscription');
  });

  it('returns the provider’s own status and body on a pass-through error', async () => {
    const g = await startGateway();
    g.mock.behave({
      kind: 'raw',
      status: 418,
      headers: { 'content-type': 'text/plain', 'x-teapot': '1' },
      body: Buffer.from('short and stout'),
    });
    const res = await request(`${g.baseUrl}/v1/batches/b_1/cancel`, {
      method: 'POST',
      headers: { 'x-service-api-key': g.adminKey, ...g.viaMock },
    });
    expect(res.statusCode).toBe(418);
    expect(res.headers['x-teapot']).toBe('1');
    expect(await res.body.text()).toBe('short and stout');
    expect((await g.logs(1))[0]).toMatchObject({ status_code: 418, is_success: false, endpoint_type: 'proxy' });
  });

  it('never sends a control-plane path to a provider', async () => {
    const g = await startGateway();
    for (const [method, path] of [
      ['PATCH', '/v1/workspaces'],
      ['POST', '/v1/audit-logs'],
      ['GET', '/v1/policies/rate-limits/x/y'],
    ]) {
      const res = await g.admin.call(method!, path!, undefined, g.viaMock);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error.code).toBe('ROUTE_NOT_FOUND');
    }
    expect(g.mock.requests).toHaveLength(0);
  });

  it('refuses paths that would climb out of the provider’s base', async () => {
    const g = await startGateway();
    // A raw socket sends the path exactly as written; HTTP clients would resolve the dots first.
    const { port } = new URL(g.baseUrl);
    const headers = Object.entries({ 'x-service-api-key': g.adminKey, ...g.viaMock })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    for (const path of [
      '/v1/files/%2e%2e/%2e%2e/admin',
      '/v1/files/%2E%2E/admin',
      '/v1/files/.%2e/x',
      '/v1/files/../admin',
    ]) {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () =>
          socket.end(`GET ${path} HTTP/1.1\r\nhost: localhost\r\n${headers}connection: close\r\n\r\n`),
        );
        let text = '';
        socket.on('data', (d) => (text += d.toString()));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      expect(answer.split('\r\n')[0], path).toBe('HTTP/1.1 400 Bad Request');
    }
    expect(g.mock.requests).toHaveLength(0);
  });

  it('answers 502 in the common error body when the provider’s chunked encoding is malformed', async () => {
    const g = await startGateway();
    const malformed = await rawProvider(
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nZZ\r\nhello\r\n0\r\n\r\n',
    );
    const viaBad = { ...g.viaMock, 'x-service-custom-host': malformed };
    const unified = await g.admin.post(
      '/v1/chat/completions',
      { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
      viaBad,
    );
    expect(unified.status).toBe(502);
    const bad = await g.admin.get('/v1/files', viaBad);
    expect(bad.status).toBe(502);
    expect(bad.body.error).toMatchObject({ type: 'api_error', code: unified.body.error.code });
    expect(bad.body.error.message).toBe(unified.body.error.message);
    expect(bad.body.error.message).toMatch(/not valid HTTP\/1\.1/);

    // A bad chunk once the answer has begun: the client's connection is ended, logged as the provider's failure.
    const midBody = await rawProvider('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\nZZ\r\n');
    const cut = await request(`${g.baseUrl}/v1/files`, {
      headers: { 'x-service-api-key': g.adminKey, ...g.viaMock, 'x-service-custom-host': midBody },
    }).then(
      async (res) => ({ status: res.statusCode, body: await res.body.text().catch((e: Error) => e) }),
      (e: Error) => ({ status: 0, body: e }),
    );
    expect(cut.status).toBe(200);
    expect(cut.body).toBeInstanceOf(Error);

    const ok = await g.admin.get('/v1/files', g.viaMock);
    expect(ok.status).toBe(200);
    const logs = await g.logs(4);
    expect(logs.filter((l: any) => l.status_code === 500)).toEqual([]);
    expect(logs.filter((l: any) => l.path === '/v1/files').map((l: any) => [l.status_code, l.error_code])).toEqual([
      [200, null],
      [499, 'UPSTREAM_UNREACHABLE'],
      [502, 'UPSTREAM_UNREACHABLE'],
    ]);
    expect(g.logLines.filter((l) => JSON.parse(l).level >= 50)).toEqual([]);
  });
});
