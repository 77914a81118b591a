import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateDocs } from '../../src/docs/generate.js';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

describe('generated documentation', () => {
  it('serves an OpenAPI 3 document with every route, without authentication', async () => {
    const t = await startTestServer();
    const res = await apiClient(t.baseUrl).get('/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    expect(res.body.components.securitySchemes['Service-Key']).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'x-service-api-key',
    });
    const operations = Object.entries(res.body.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    for (const route of t.server.routes) {
      if (route.url === '/v1/openapi.json' || route.method === 'ANY') continue;
      const path = route.url.replace(/:(\w+)/g, '{$1}').replace(/\*$/, '{*}');
      expect(operations).toContain(`${route.method} ${path}`);
    }
    const create = res.body.paths['/v1/policies/rate-limits'].post;
    expect(create.requestBody.content['application/json'].schema.required).toEqual(
      expect.arrayContaining(['conditions', 'group_by', 'type', 'unit', 'value']),
    );
  });

  it('keeps docs/ in step with the code (run `npm run docs` after changing routes or error codes)', async () => {
    const docs = await generateDocs();
    for (const [name, content] of Object.entries(docs)) {
      expect(readFileSync(new URL(`../../docs/${name}`, import.meta.url), 'utf8'), `docs/${name} is stale`).toBe(
        content,
      );
    }
  });
});
