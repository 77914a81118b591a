import { describe, expect, it } from 'vitest';
import { ENDPOINT_PATHS, type EndpointType } from '../../src/providers/endpoints.js';
import { listProviders, supportsEndpoint } from '../../src/providers/registry.js';
import type { ProviderDefinition } from '../../src/providers/types.js';
import { startGateway } from '../helpers/gateway.js';

const chat = { model: 'some-model', messages: [{ role: 'user', content: 'ping' }] };
const openAIWire = listProviders().filter((provider) => provider.wireFormat === 'openai');

/** Where each provider must be reached, from its definition plus what its kind of account needs. */
function expectation(provider: ProviderDefinition): {
  headers: Record<string, string>;
  host: string;
  path: RegExp;
  auth: [string, string];
} {
  const key = `key-for-${provider.name}`;
  if (provider.name === 'azure-openai') {
    return {
      headers: {
        'x-service-azure-resource-name': 'myres',
        'x-service-azure-deployment-id': 'dep-1',
        authorization: `Bearer ${key}`,
      },
      host: 'myres.openai.azure.com',
      path: /^\/openai\/deployments\/dep-1\/chat\/completions\?api-version=\d{4}-\d{2}-\d{2}/,
      auth: ['api-key', key],
    };
  }
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (provider.requiresCustomHost) {
    return {
      headers: { 'x-service-custom-host': 'https://tenant.example.com/acct-1/v1', authorization: `Bearer ${key}` },
      host: 'tenant.example.com',
      path: /^\/acct-1\/v1\/chat\/completions$/,
      auth: ['authorization', `Bearer ${key}`],
    };
  }
  const base = new URL(provider.baseUrl!);
  return {
    headers: { authorization: `Bearer ${key}` },
    host: base.host,
    path: new RegExp(`^${escape(base.pathname.replace(/\/+$/, ''))}/chat/completions$`),
    auth:
      provider.auth.kind === 'header' ? [provider.auth.header.toLowerCase(), key] : ['authorization', `Bearer ${key}`],
  };
}

/** JSON families with a body the gateway accepts, to find one each provider lacks. */
const PROBES: Array<{ endpoint: Exclude<EndpointType, 'proxy'>; body: unknown }> = [
  { endpoint: 'rerank', body: { model: 'm', query: 'q', documents: ['a'] } },
  { endpoint: 'moderate', body: { input: 'x' } },
  { endpoint: 'imageGenerate', body: { prompt: 'x' } },
  { endpoint: 'embed', body: { model: 'm', input: 'x' } },
  { endpoint: 'complete', body: { model: 'm', prompt: 'x' } },
  { endpoint: 'createModelResponse', body: { model: 'm', input: 'x' } },
];

describe('provider registry through the gateway', () => {
  it('registers more than 40 providers, every one with a unique name', () => {
    const names = listProviders().map((provider) => provider.name);
    expect(names.length).toBeGreaterThan(40);
    expect(openAIWire.length).toBeGreaterThanOrEqual(40);
    expect(new Set(names).size).toBe(names.length);
  });

  it('reaches every OpenAI-format provider at its documented host and path, with its auth header', async () => {
    const g = await startGateway({ routeAllHostsToMock: true });
    for (const provider of openAIWire) {
      g.mock.reset();
      const want = expectation(provider);
      const res = await g.admin.post('/v1/chat/completions', chat, {
        'x-service-provider': provider.name,
        ...want.headers,
      });
      expect.soft(res.status, `${provider.name}: gateway status`).toBe(200);
      const upstream = g.mock.requests[0];
      expect.soft(upstream, `${provider.name}: no upstream request`).toBeDefined();
      if (!upstream) continue;
      expect.soft(upstream.headers.host, `${provider.name}: host`).toBe(want.host);
      expect.soft(upstream.url, `${provider.name}: path`).toMatch(want.path);
      expect.soft(upstream.headers[want.auth[0]], `${provider.name}: ${want.auth[0]}`).toBe(want.auth[1]);
      if (want.auth[0] !== 'authorization')
        expect
          .soft(upstream.headers.authorization, `${provider.name}: no bearer besides ${want.auth[0]}`)
          .toBeUndefined();
      expect
        .soft((upstream.json as { model?: string } | undefined)?.model, `${provider.name}: body forwarded`)
        .toBe('some-model');
    }
  });

  it('refuses an endpoint a provider lacks with 400 UNSUPPORTED_ENDPOINT naming both, before calling it', async () => {
    const g = await startGateway({ routeAllHostsToMock: true });
    for (const provider of openAIWire) {
      const probe = PROBES.find(({ endpoint }) => !supportsEndpoint(provider, endpoint));
      expect.soft(probe, `${provider.name}: offers every probed family`).toBeDefined();
      if (!probe) continue;
      const res = await g.admin.post(`/v1${ENDPOINT_PATHS[probe.endpoint].path}`, probe.body, {
        'x-service-provider': provider.name,
        ...expectation(provider).headers,
      });
      expect.soft(res.status, `${provider.name} ${probe.endpoint}: status`).toBe(400);
      expect.soft(res.body?.error?.code, `${provider.name} ${probe.endpoint}: code`).toBe('UNSUPPORTED_ENDPOINT');
      expect.soft(res.body?.error?.message, `${provider.name}: message names the provider`).toContain(provider.name);
      expect.soft(res.body?.error?.message, `${provider.name}: message names the endpoint`).toContain(probe.endpoint);
    }
    expect(g.mock.requests).toHaveLength(0);
  });
});
