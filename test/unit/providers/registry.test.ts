import { describe, expect, it } from 'vitest';
import { ENDPOINT_PATHS, ENDPOINT_TYPES, type EndpointType } from '../../../src/providers/endpoints.js';
import {
  AZURE_DEFAULT_API_VERSION,
  ProviderConfigError,
  UpstreamPathError,
  buildUpstreamTarget,
  getProvider,
  listProviders,
  supportsEndpoint,
} from '../../../src/providers/registry.js';
import type { ProviderDefinition, TargetContext } from '../../../src/providers/types.js';

const KEY = 'sk-test-123';

function provider(name: string): ProviderDefinition {
  const found = getProvider(name);
  if (!found) throw new Error(`provider ${name} is not registered`);
  return found;
}

/**
 * The chat-completions URL and credential header each provider's documentation gives, written
 * out by hand so that the test checks the registry against the docs rather than re-reading
 * it. Providers without a public default host get the context they need (`ctx`).
 */
const EXPECTED: Record<string, { url: string; header: 'authorization' | 'api-key'; ctx?: Partial<TargetContext> }> = {
  openai: { url: 'https://api.openai.com/v1/chat/completions', header: 'authorization' },
  'azure-openai': {
    url: `https://my-res.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=${AZURE_DEFAULT_API_VERSION}`,
    header: 'api-key',
    ctx: { azure: { resourceName: 'my-res', deploymentId: 'gpt-4o' } },
  },
  groq: { url: 'https://api.groq.com/openai/v1/chat/completions', header: 'authorization' },
  'together-ai': { url: 'https://api.together.ai/v1/chat/completions', header: 'authorization' },
  'fireworks-ai': { url: 'https://api.fireworks.ai/inference/v1/chat/completions', header: 'authorization' },
  'mistral-ai': { url: 'https://api.mistral.ai/v1/chat/completions', header: 'authorization' },
  deepseek: { url: 'https://api.deepseek.com/v1/chat/completions', header: 'authorization' },
  openrouter: { url: 'https://openrouter.ai/api/v1/chat/completions', header: 'authorization' },
  'perplexity-ai': { url: 'https://api.perplexity.ai/chat/completions', header: 'authorization' },
  'x-ai': { url: 'https://api.x.ai/v1/chat/completions', header: 'authorization' },
  deepinfra: { url: 'https://api.deepinfra.com/v1/openai/chat/completions', header: 'authorization' },
  cerebras: { url: 'https://api.cerebras.ai/v1/chat/completions', header: 'authorization' },
  sambanova: { url: 'https://api.sambanova.ai/v1/chat/completions', header: 'authorization' },
  'nvidia-nim': { url: 'https://integrate.api.nvidia.com/v1/chat/completions', header: 'authorization' },
  ollama: { url: 'http://localhost:11434/v1/chat/completions', header: 'authorization' },
  'lm-studio': { url: 'http://localhost:1234/v1/chat/completions', header: 'authorization' },
  vllm: { url: 'http://localhost:8000/v1/chat/completions', header: 'authorization' },
  anyscale: { url: 'https://api.endpoints.anyscale.com/v1/chat/completions', header: 'authorization' },
  hyperbolic: { url: 'https://api.hyperbolic.xyz/v1/chat/completions', header: 'authorization' },
  'novita-ai': { url: 'https://api.novita.ai/openai/v1/chat/completions', header: 'authorization' },
  nebius: { url: 'https://api.tokenfactory.nebius.com/v1/chat/completions', header: 'authorization' },
  moonshot: { url: 'https://api.moonshot.ai/v1/chat/completions', header: 'authorization' },
  zhipu: { url: 'https://open.bigmodel.cn/api/paas/v4/chat/completions', header: 'authorization' },
  'z-ai': { url: 'https://api.z.ai/api/paas/v4/chat/completions', header: 'authorization' },
  dashscope: {
    url: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1/chat/completions',
    header: 'authorization',
  },
  siliconflow: { url: 'https://api.siliconflow.com/v1/chat/completions', header: 'authorization' },
  'github-models': { url: 'https://models.github.ai/inference/chat/completions', header: 'authorization' },
  huggingface: { url: 'https://router.huggingface.co/v1/chat/completions', header: 'authorization' },
  'cloudflare-workers-ai': {
    url: 'https://api.cloudflare.com/client/v4/accounts/acc123/ai/v1/chat/completions',
    header: 'authorization',
    ctx: { customHost: 'https://api.cloudflare.com/client/v4/accounts/acc123/ai/v1' },
  },
  'featherless-ai': { url: 'https://api.featherless.ai/v1/chat/completions', header: 'authorization' },
  nscale: { url: 'https://inference.api.nscale.com/v1/chat/completions', header: 'authorization' },
  'inference-net': { url: 'https://api.inference.net/v1/chat/completions', header: 'authorization' },
  predibase: {
    url: 'https://serving.app.predibase.com/tenant1/deployments/v2/llms/qwen3-8b/v1/chat/completions',
    header: 'authorization',
    ctx: { customHost: 'https://serving.app.predibase.com/tenant1/deployments/v2/llms/qwen3-8b/v1' },
  },
  ai21: { url: 'https://api.ai21.com/studio/v1/chat/completions', header: 'authorization' },
  baseten: { url: 'https://inference.baseten.co/v1/chat/completions', header: 'authorization' },
  'friendli-ai': { url: 'https://api.friendli.ai/serverless/v1/chat/completions', header: 'authorization' },
  upstage: { url: 'https://api.upstage.ai/v1/chat/completions', header: 'authorization' },
  minimax: { url: 'https://api.minimax.io/v1/chat/completions', header: 'authorization' },
  scaleway: { url: 'https://api.scaleway.ai/v1/chat/completions', header: 'authorization' },
  'venice-ai': { url: 'https://api.venice.ai/api/v1/chat/completions', header: 'authorization' },
};

const LOCAL = new Set(['ollama', 'lm-studio', 'vllm']);

describe('provider catalogue', () => {
  it('registers the required providers and has an expectation for every one', () => {
    const names = listProviders()
      .filter((p) => p.wireFormat === 'openai')
      .map((p) => p.name);
    for (const required of [
      'openai',
      'azure-openai',
      'groq',
      'together-ai',
      'fireworks-ai',
      'mistral-ai',
      'deepseek',
      'openrouter',
      'perplexity-ai',
      'x-ai',
      'deepinfra',
      'cerebras',
      'sambanova',
      'nvidia-nim',
      'ollama',
      'lm-studio',
      'vllm',
      'anyscale',
    ]) {
      expect(names).toContain(required);
    }
    expect([...names].sort()).toEqual(Object.keys(EXPECTED).sort());
    expect(new Set(names).size).toBe(names.length);
  });

  it('registers every name once, providers with their own wire format included, and reaches 40 or more', () => {
    const names = listProviders().map((p) => p.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names.length).toBeGreaterThanOrEqual(40);
  });

  it.each(listProviders().map((p) => [p.name, p] as const))('%s is a well-formed definition', (_name, def) => {
    if (def.wireFormat === 'openai') expect(def.auth.kind).not.toBe('adapter');
    else expect(def.auth.kind).toBe('adapter');
    expect(def.endpoints.has('proxy')).toBe(true);
    expect(def.endpoints.has('chatComplete')).toBe(true);
    expect(def.displayName.length).toBeGreaterThan(0);
    expect(def.docsUrl).toMatch(/^https:\/\//);
    for (const endpoint of def.endpoints) expect(ENDPOINT_TYPES).toContain(endpoint);
    if (def.baseUrl !== null) {
      expect(def.baseUrl).not.toMatch(/\/$/);
      expect(new URL(def.baseUrl).protocol).toBe(LOCAL.has(def.name) ? 'http:' : 'https:');
    }
    if (def.requiresCustomHost) expect(def.baseUrl).toBeNull();
  });

  it('returns a copy from listProviders, so callers cannot change the registry', () => {
    const list = listProviders();
    list.length = 0;
    expect(listProviders().length).toBeGreaterThan(0);
  });
});

describe('buildUpstreamTarget for /chat/completions', () => {
  it.each(Object.entries(EXPECTED))('%s → documented URL and auth header', (name, expected) => {
    const target = buildUpstreamTarget(provider(name), '/chat/completions', { apiKey: KEY, ...expected.ctx });
    expect(target.url).toBe(expected.url);
    const url = new URL(target.url);
    expect(url.protocol).toBe(LOCAL.has(name) ? 'http:' : 'https:');
    const value = expected.header === 'authorization' ? `Bearer ${KEY}` : KEY;
    expect(target.headers).toEqual({ [expected.header]: value });
  });

  it('sends no auth header when the credential is null or empty', () => {
    for (const def of listProviders()) {
      const ctx = EXPECTED[def.name]?.ctx ?? {};
      expect(buildUpstreamTarget(def, '/chat/completions', { ...ctx, apiKey: null }).headers).toEqual({});
      expect(buildUpstreamTarget(def, '/chat/completions', { ...ctx, apiKey: '' }).headers).toEqual({});
    }
  });
});

describe('path and custom host joining', () => {
  const openai = () => provider('openai');

  it('keeps the query string of the path', () => {
    expect(buildUpstreamTarget(openai(), '/models?limit=5&after=x', { apiKey: KEY }).url).toBe(
      'https://api.openai.com/v1/models?limit=5&after=x',
    );
  });

  it('never doubles or drops slashes', () => {
    for (const host of ['http://127.0.0.1:11434/v1', 'http://127.0.0.1:11434/v1/', 'http://127.0.0.1:11434/v1//']) {
      for (const path of ['/chat/completions', 'chat/completions', '//chat/completions']) {
        expect(buildUpstreamTarget(provider('ollama'), path, { apiKey: null, customHost: host }).url).toBe(
          'http://127.0.0.1:11434/v1/chat/completions',
        );
      }
    }
  });

  it('uses a custom host with a path as the base, as it is', () => {
    const target = buildUpstreamTarget(openai(), '/embeddings', {
      apiKey: KEY,
      customHost: 'https://proxy.example.com/openai/v2',
    });
    expect(target.url).toBe('https://proxy.example.com/openai/v2/embeddings');
    expect(target.headers).toEqual({ authorization: `Bearer ${KEY}` });
  });

  it("gives a bare custom host the default base's path", () => {
    expect(
      buildUpstreamTarget(provider('ollama'), '/chat/completions', { apiKey: null, customHost: 'http://gpu-box:11434' })
        .url,
    ).toBe('http://gpu-box:11434/v1/chat/completions');
    expect(
      buildUpstreamTarget(provider('deepinfra'), '/embeddings', { apiKey: KEY, customHost: 'https://di.internal/' })
        .url,
    ).toBe('https://di.internal/v1/openai/embeddings');
  });

  it('refuses a provider without a base URL when no custom host is given', () => {
    for (const name of ['cloudflare-workers-ai', 'predibase']) {
      expect(() => buildUpstreamTarget(provider(name), '/chat/completions', { apiKey: KEY })).toThrow(
        ProviderConfigError,
      );
      expect(() => buildUpstreamTarget(provider(name), '/chat/completions', { apiKey: KEY, customHost: null })).toThrow(
        /custom host/,
      );
    }
  });

  it('refuses custom hosts that are not plain http(s) base URLs', () => {
    for (const customHost of [
      'ftp://example.com',
      'not a url',
      'https://example.com/v1?x=1',
      'https://u:p@example.com',
    ]) {
      expect(() => buildUpstreamTarget(openai(), '/chat/completions', { apiKey: KEY, customHost })).toThrow(
        ProviderConfigError,
      );
    }
  });

  it('refuses dot segments that would step out of the base path', () => {
    for (const path of ['/../admin', '/chat/../../x', '/%2e%2e/x', '/.%2E/x', '/./models', '/a\\..\\b']) {
      expect(() => buildUpstreamTarget(openai(), path, { apiKey: KEY })).toThrow(UpstreamPathError);
    }
    expect(buildUpstreamTarget(openai(), '/files/file...abc/content', { apiKey: KEY }).url).toBe(
      'https://api.openai.com/v1/files/file...abc/content',
    );
  });
});

describe('Azure OpenAI', () => {
  const azure = () => provider('azure-openai');

  it('builds the deployment URL with the configured api-version', () => {
    const target = buildUpstreamTarget(azure(), '/embeddings', {
      apiKey: KEY,
      azure: { resourceName: 'contoso', deploymentId: 'text-embedding-3-small', apiVersion: '2025-04-01-preview' },
    });
    expect(target.url).toBe(
      'https://contoso.openai.azure.com/openai/deployments/text-embedding-3-small/embeddings?api-version=2025-04-01-preview',
    );
    expect(target.headers).toEqual({ 'api-key': KEY });
  });

  it('defaults to the latest GA api-version', () => {
    expect(AZURE_DEFAULT_API_VERSION).toBe('2024-10-21');
  });

  it('merges the api-version with the query string of the path', () => {
    const ctx = { apiKey: KEY, azure: { resourceName: 'contoso', deploymentId: 'd1' } };
    expect(buildUpstreamTarget(azure(), '/chat/completions?foo=bar&x=1', ctx).url).toBe(
      `https://contoso.openai.azure.com/openai/deployments/d1/chat/completions?api-version=${AZURE_DEFAULT_API_VERSION}&foo=bar&x=1`,
    );
    // A client's api-version is kept when none is configured, replaced when one is.
    expect(buildUpstreamTarget(azure(), '/chat/completions?api-version=2024-06-01&foo=bar', ctx).url).toBe(
      'https://contoso.openai.azure.com/openai/deployments/d1/chat/completions?api-version=2024-06-01&foo=bar',
    );
    const configured = { ...ctx, azure: { ...ctx.azure, apiVersion: '2024-10-21' } };
    expect(buildUpstreamTarget(azure(), '/chat/completions?api-version=2023-05-15', configured).url).toBe(
      'https://contoso.openai.azure.com/openai/deployments/d1/chat/completions?api-version=2024-10-21',
    );
  });

  it('uses a custom host in place of the resource host', () => {
    const target = buildUpstreamTarget(azure(), '/chat/completions', {
      apiKey: KEY,
      customHost: 'https://apim.example.com/',
      azure: { deploymentId: 'gpt 4o', apiVersion: '2024-10-21' },
    });
    expect(target.url).toBe(
      'https://apim.example.com/openai/deployments/gpt%204o/chat/completions?api-version=2024-10-21',
    );
  });

  it('names every missing setting', () => {
    const attempt = (ctx: TargetContext) => () => buildUpstreamTarget(azure(), '/chat/completions', ctx);
    expect(attempt({ apiKey: KEY })).toThrow(/resourceName, deploymentId/);
    expect(attempt({ apiKey: KEY, azure: { resourceName: 'contoso' } })).toThrow(/deploymentId/);
    expect(attempt({ apiKey: KEY, azure: { deploymentId: 'd1' } })).toThrow(/resourceName/);
    expect(attempt({ apiKey: KEY, azure: { resourceName: 'contoso', deploymentId: 'd1', apiVersion: ' ' } })).toThrow(
      /apiVersion/,
    );
    try {
      attempt({ apiKey: KEY, azure: {} })();
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ProviderConfigError);
      expect((error as ProviderConfigError).fields).toEqual(['resourceName', 'deploymentId']);
      expect((error as ProviderConfigError).provider).toBe('azure-openai');
    }
  });

  it('refuses a resource name that is not a host label', () => {
    for (const resourceName of ['evil.com/#', 'a b', '-x', 'x.y']) {
      expect(() =>
        buildUpstreamTarget(azure(), '/chat/completions', { apiKey: KEY, azure: { resourceName, deploymentId: 'd1' } }),
      ).toThrow(/resourceName/);
    }
  });
});

describe('getProvider', () => {
  it.each([
    ['open-ai', 'openai'],
    ['azure', 'azure-openai'],
    ['mistral', 'mistral-ai'],
    ['together', 'together-ai'],
    ['fireworks', 'fireworks-ai'],
    ['perplexity', 'perplexity-ai'],
    ['xai', 'x-ai'],
    ['nvidia', 'nvidia-nim'],
    ['lmstudio', 'lm-studio'],
  ])('resolves the alias %s to %s', (alias, name) => {
    expect(getProvider(alias)?.name).toBe(name);
  });

  it('is case-sensitive and knows no unknown names', () => {
    expect(getProvider('OpenAI')).toBeUndefined();
    expect(getProvider('Azure')).toBeUndefined();
    expect(getProvider('nope')).toBeUndefined();
    expect(getProvider('toString')).toBeUndefined();
    expect(getProvider('__proto__')).toBeUndefined();
  });
});

describe('supportsEndpoint', () => {
  it('always supports proxy', () => {
    for (const def of listProviders()) expect(supportsEndpoint(def, 'proxy')).toBe(true);
  });

  it.each<[string, EndpointType, boolean]>([
    ['openai', 'moderate', true],
    ['openai', 'rerank', false],
    ['groq', 'createTranscription', true],
    ['groq', 'createTranslation', true],
    ['groq', 'embed', false],
    ['mistral-ai', 'moderate', true],
    ['mistral-ai', 'embed', true],
    ['together-ai', 'rerank', true],
    ['together-ai', 'imageGenerate', true],
    ['vllm', 'rerank', true],
    ['deepseek', 'embed', false],
    ['perplexity-ai', 'listModels', false],
    ['azure-openai', 'listModels', false],
  ])('%s supports %s: %s', (name, endpoint, expected) => {
    expect(supportsEndpoint(provider(name), endpoint)).toBe(expected);
  });
});

describe('endpoint paths', () => {
  it('maps every family but proxy to its OpenAI path', () => {
    expect(Object.keys(ENDPOINT_PATHS).sort()).toEqual(ENDPOINT_TYPES.filter((t) => t !== 'proxy').sort());
    expect(ENDPOINT_PATHS.chatComplete).toEqual({ method: 'POST', path: '/chat/completions' });
    expect(ENDPOINT_PATHS.listModels).toEqual({ method: 'GET', path: '/models' });
    expect(ENDPOINT_PATHS.createModelResponse.path).toBe('/responses');
  });
});
