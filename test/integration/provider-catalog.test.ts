import { describe, expect, it } from 'vitest';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';

describe('GET /v1/providers/catalog', () => {
  it('lists every provider by name with its wire format, auth and endpoint families', async () => {
    const t = await startTestServer();
    const res = await apiClient(t.baseUrl, t.adminKey).get('/v1/providers/catalog');
    expect(res.status).toBe(200);
    expect(res.body.total).toBeGreaterThanOrEqual(45);
    const byName = new Map(res.body.data.map((p: { name: string }) => [p.name, p]));
    expect(byName.get('openai')).toMatchObject({
      wire_format: 'openai',
      auth: 'bearer',
      object: 'provider-definition',
    });
    expect(byName.get('anthropic')).toMatchObject({
      wire_format: 'anthropic',
      endpoints: expect.arrayContaining(['chatComplete', 'proxy']),
    });
    expect(byName.get('bedrock')).toMatchObject({
      wire_format: 'bedrock',
      endpoints: expect.arrayContaining(['chatComplete', 'embed', 'rerank']),
    });
    expect(byName.get('cohere')).toMatchObject({
      wire_format: 'cohere',
      endpoints: expect.arrayContaining(['chatComplete', 'embed', 'rerank']),
    });
    expect(byName.get('vertex-ai')).toMatchObject({
      wire_format: 'vertex-ai',
      endpoints: expect.arrayContaining(['chatComplete', 'embed']),
    });
    expect((byName.get('anthropic') as { endpoints: string[] }).endpoints).not.toContain('embed');
    expect(typeof (byName.get('bedrock') as { auth: string }).auth).toBe('string');
  });
});
