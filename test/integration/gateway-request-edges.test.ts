import { describe, expect, it } from 'vitest';
import { startGateway, type GatewayHarness } from '../helpers/gateway.js';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { rawRequest } from '../helpers/raw-http.js';

const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
const completion = { model: 'gpt-3.5-turbo-instruct', prompt: 'hi' };

function headersOf(g: GatewayHarness, extra: Record<string, string> = {}) {
  return { 'x-service-api-key': g.adminKey, ...g.viaMock, 'content-type': 'application/json', ...extra };
}

describe('gateway: other spellings of a route get that route, or a 4xx', () => {
  it('duplicate and trailing slashes reach the first-class route: its validation, its endpoint type, the canonical path upstream', async () => {
    const g = await startGateway();
    for (const path of [
      '/v1//chat/completions',
      '/v1/chat/completions/',
      '/v1/chat//completions',
      '//v1/chat/completions//',
    ]) {
      const ok = await rawRequest(g.baseUrl, 'POST', path, headersOf(g), JSON.stringify(chat));
      expect(ok.status, path).toBe(200);
      const refused = await rawRequest(
        g.baseUrl,
        'POST',
        path,
        headersOf(g),
        JSON.stringify({ ...chat, temperature: 5 }),
      );
      expect(refused.status, path).toBe(400);
      expect(JSON.parse(refused.body).error).toMatchObject({ code: 'INVALID_REQUEST', param: 'temperature' });
    }
    expect(g.mock.requests.map((r) => r.url)).toEqual(Array(4).fill('/v1/chat/completions'));
    const logs = await g.logs(8);
    expect(logs.every((l) => l.endpoint_type === 'chatComplete' && l.path === '/v1/chat/completions')).toBe(true);
    expect(logs.filter((l) => l.status_code === 400 && l.error_code === 'INVALID_REQUEST')).toHaveLength(4);
  });

  it('another case of a first-class route is a 404 that names the route, never a pass-through', async () => {
    const g = await startGateway();
    for (const [method, path] of [
      ['POST', '/v1/CHAT/completions'],
      ['POST', '/v1/Embeddings'],
      ['GET', '/v1/MODELS'],
      ['POST', '/v1/audio/Transcriptions'],
      ['GET', '/v1/WORKSPACES'],
      ['PATCH', '/v1/Api-Keys/x'],
    ] as const) {
      const res = await rawRequest(g.baseUrl, method, path, headersOf(g), method === 'GET' ? '' : JSON.stringify(chat));
      expect(res.status, path).toBe(404);
      expect(JSON.parse(res.body).error.code).toBe('ROUTE_NOT_FOUND');
    }
    expect(g.mock.requests).toHaveLength(0);
    // The refusals are the caller's traffic: they show in its logs.
    expect((await g.logs(6)).every((l) => l.status_code === 404 && l.error_code === 'ROUTE_NOT_FOUND')).toBe(true);
  });

  it('control-plane paths are normalised too: /v1//workspaces/ is /v1/workspaces, with its rules', async () => {
    const g = await startGateway();
    const listed = await rawRequest(g.baseUrl, 'GET', '/v1//workspaces/', headersOf(g));
    expect(listed.status).toBe(200);
    expect(JSON.parse(listed.body)).toMatchObject({ object: 'list' });
    const strict = await rawRequest(
      g.baseUrl,
      'POST',
      '/v1//workspaces/',
      headersOf(g),
      JSON.stringify({ name: 'X', slug: 'x', typo: 1 }),
    );
    expect(strict.status).toBe(400);
    expect(g.mock.requests).toHaveLength(0);
  });
});

describe('gateway: paths that could leave the provider base are refused before anything is forwarded', () => {
  it('dot segments, encoded slashes, backslashes: 400 in the one error body, logged, no upstream call', async () => {
    const g = await startGateway();
    const paths = [
      '/v1/files/..%2f..%2fadmin',
      '/v1/files/%2F..',
      '/v1/files%5cadmin',
      '/v1/files\\..\\admin',
      '/v1/files/%2e%2e/x',
      '/v1//files/../x',
      '/v1/chat/completions/./',
      '/v1/workspaces/..',
    ];
    for (const path of paths) {
      const res = await rawRequest(g.baseUrl, 'POST', path, headersOf(g), '{}');
      expect(res.status, path).toBe(400);
      expect(JSON.parse(res.body).error, path).toMatchObject({
        code: 'INVALID_REQUEST',
        param: 'path',
        type: 'invalid_request_error',
      });
      expect(res.headers['x-request-id'], path).toBeTruthy();
    }
    expect(g.mock.requests).toHaveLength(0);
    const logs = await g.logs(paths.length);
    expect(logs.every((l) => l.status_code === 400 && l.error_code === 'INVALID_REQUEST')).toBe(true);
    expect(logs.map((l) => l.path)).toContain('/v1/files/..%2f..%2fadmin');
  });

  it('a malformed percent-encoding gets our error body with x-request-id (not fastify’s) and a log record', async () => {
    const g = await startGateway();
    for (const path of ['/v1/files/%zz', '/v1/chat/completions%', '/v1/files/%ff', '/nowhere/%zz']) {
      const res = await rawRequest(g.baseUrl, 'POST', path, { ...headersOf(g), 'x-request-id': 'edge-1' }, '{}');
      expect(res.status, path).toBe(400);
      const body = JSON.parse(res.body);
      expect(Object.keys(body), path).toEqual(['error']);
      expect(body.error, path).toMatchObject({ code: 'INVALID_REQUEST', param: 'path' });
      expect(res.headers['x-request-id'], path).toBe('edge-1');
    }
    expect(g.mock.requests).toHaveLength(0);
    // The three under /v1 are gateway traffic of a known key; the fourth is in the server log.
    expect((await g.logs(3)).map((l) => l.path).sort()).toEqual([
      '/v1/chat/completions%',
      '/v1/files/%ff',
      '/v1/files/%zz',
    ]);
    expect(g.logLines.some((line) => line.includes('"request refused"') && line.includes('/nowhere/'))).toBe(true);
  });
});

describe('gateway: JSON nested too deep', () => {
  const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

  it('10,000 levels on a gateway route: 400 naming the limit, no upstream call, logged; 60 levels pass', async () => {
    const g = await startGateway();
    const body = `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"metadata_blob":${deep(10_000)}}`;
    const res = await g.admin.call('POST', '/v1/chat/completions', body, g.viaMock);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_JSON');
    expect(res.body.error.message).toContain('64');
    expect(g.mock.requests).toHaveLength(0);
    expect((await g.logs(1))[0]).toMatchObject({
      status_code: 400,
      error_code: 'INVALID_JSON',
      endpoint_type: 'chatComplete',
    });
    // Brackets inside strings do not count, and real nesting under the limit is forwarded.
    const fine = await g.admin.call(
      'POST',
      '/v1/chat/completions',
      `{"model":"gpt-4o","messages":[{"role":"user","content":"${'['.repeat(500)}"}],"x":${deep(60)}}`,
      g.viaMock,
    );
    expect(fine.status).toBe(200);
  });

  it('10,000 levels on an admin mutation: 400 and nothing changes', async () => {
    const g = await startGateway();
    const before = await g.admin.get('/v1/workspaces');
    const res = await g.admin.call(
      'POST',
      '/v1/workspaces',
      `{"name":"Deep","slug":"deep","metadata":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`,
    );
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_JSON');
    expect(res.body.error.message).toContain('64');
    expect((await g.admin.get('/v1/workspaces')).body.total).toBe(before.body.total);
  });
});

describe('gateway: best_of and validation refusals in the logs', () => {
  it('best_of is at least n; only best_of 1 may stream; every refusal is in GET /v1/logs', async () => {
    const g = await startGateway();
    const cases: Array<[Record<string, unknown>, number]> = [
      [{ best_of: 1, n: 1 }, 200],
      [{ best_of: 2, n: 2 }, 200],
      [{ best_of: 3, n: 2 }, 200],
      [{ best_of: 1, stream: true }, 200],
      [{ best_of: 1, n: 2 }, 400],
      [{ best_of: 2, stream: true }, 400],
    ];
    for (const [extra, status] of cases) {
      const res = await g.admin.call('POST', '/v1/completions', { ...completion, ...extra }, g.viaMock);
      expect(res.status, JSON.stringify(extra)).toBe(status);
      if (status === 400) expect(res.body.error.param).toBe('best_of');
    }
    expect(g.mock.requests).toHaveLength(4);
    const refused = await g.logs(2, 'status_code=400');
    expect(refused).toHaveLength(2);
    expect(
      refused.every(
        (l) =>
          l.endpoint_type === 'complete' &&
          l.error_code === 'INVALID_REQUEST' &&
          l.is_success === false &&
          l.model === completion.model,
      ),
    ).toBe(true);
  });
});

describe('gateway: refusals by authorisation', () => {
  it('a key without completions.write is refused (403) and the refusal is in its workspace’s logs; a missing key is in the server log', async () => {
    const g = await startGateway();
    const workspace = await createWorkspace(g.admin, 'Refused', 'refused');
    const logsOnly = await createWorkspaceKey(g.admin, { workspace_id: workspace.id, scopes: ['logs.list'] });
    const refused = await apiClient(g.baseUrl, logsOnly.key).post('/v1/chat/completions', chat, g.viaMock);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('MISSING_SCOPE');
    const anonymous = await apiClient(g.baseUrl).post('/v1/chat/completions', chat, {
      ...g.viaMock,
      'x-request-id': 'anon-1',
    });
    expect(anonymous.status).toBe(401);
    expect(g.mock.requests).toHaveLength(0);

    const logs = await g.logs(1);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({
      status_code: 403,
      error_code: 'MISSING_SCOPE',
      workspace_id: workspace.id,
      api_key_id: logsOnly.id,
      endpoint_type: 'chatComplete',
    });
    // The key's own workspace sees it too.
    expect((await apiClient(g.baseUrl, logsOnly.key).get('/v1/logs')).body.data).toHaveLength(1);
    expect(
      g.logLines.some(
        (line) => line.includes('"request refused"') && line.includes('anon-1') && line.includes('"status":401'),
      ),
    ).toBe(true);
  });
});
