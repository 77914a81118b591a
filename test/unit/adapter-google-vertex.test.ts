import { exportPKCS8, generateKeyPair, jwtVerify } from 'jose';
import { MockAgent } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { createGoogleAdapter } from '../../src/providers/adapters/google/adapter.js';
import { VERTEX_AI_PROVIDER } from '../../src/providers/adapters/google/providers.js';
import { createTokenCache, parseServiceAccount } from '../../src/providers/adapters/google/vertex-auth.js';
import type { AdapterContext } from '../../src/providers/adapters/types.js';

const TOKEN_HOST = 'https://oauth2.googleapis.com';
let keys: Awaited<ReturnType<typeof generateKeyPair>>;
let privateKeyPem: string;

beforeAll(async () => {
  keys = await generateKeyPair('RS256', { extractable: true });
  privateKeyPem = await exportPKCS8(keys.privateKey);
});

const serviceAccount = (over: Record<string, unknown> = {}) => ({
  type: 'service_account',
  project_id: 'sa-project',
  private_key_id: 'key-1',
  private_key: privateKeyPem,
  client_email: 'gateway@sa-project.iam.gserviceaccount.com',
  token_uri: `${TOKEN_HOST}/token`,
  ...over,
});

/** A token endpoint on a MockAgent: records assertions and answers with numbered tokens. */
function tokenEndpoint(answer: { status: number; body: Record<string, unknown> } | null = null) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const assertions: string[] = [];
  agent
    .get(TOKEN_HOST)
    .intercept({ path: '/token', method: 'POST' })
    .reply((opts) => {
      const form = new URLSearchParams(typeof opts.body === 'string' ? opts.body : '');
      assertions.push(form.get('assertion') ?? '');
      if (answer) return { statusCode: answer.status, data: answer.body };
      return {
        statusCode: 200,
        data: { access_token: `ya29.token-${assertions.length}`, expires_in: 3599, token_type: 'Bearer' },
      };
    })
    .persist();
  return { agent, assertions };
}

function vertexCtx(
  agent: MockAgent,
  clock: { now: number },
  over: Partial<AdapterContext['target']> = {},
  headers: Record<string, string> = {},
): AdapterContext {
  return {
    provider: VERTEX_AI_PROVIDER,
    target: { apiKey: null, ...over },
    options: {},
    headers,
    dispatcher: agent,
    now: () => clock.now,
  };
}

const chat = { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] };
const stored = (config: Record<string, unknown>) => ({
  configurations: { vertex_project_id: 'my-project', vertex_region: 'us-central1', ...config },
});

describe('vertex-ai adapter', () => {
  it('mints a token from a stored service account and calls the regional publisher model', async () => {
    const { agent, assertions } = tokenEndpoint();
    const adapter = createGoogleAdapter({ tokenCache: createTokenCache() });
    const clock = { now: 1_700_000_000_000 };
    const req = await adapter.buildRequest(
      'chatComplete',
      chat,
      vertexCtx(agent, clock, stored({ vertex_service_account_json: serviceAccount() })),
    );
    expect(req.url).toBe(
      'https://us-central1-aiplatform.googleapis.com/v1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent',
    );
    expect(req.headers.authorization).toBe('Bearer ya29.token-1');
    const { payload, protectedHeader } = await jwtVerify(assertions[0]!, keys.publicKey, {
      audience: `${TOKEN_HOST}/token`,
      issuer: 'gateway@sa-project.iam.gserviceaccount.com',
      currentDate: new Date(clock.now),
    });
    expect(protectedHeader).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'key-1' });
    expect(payload).toEqual({
      iss: 'gateway@sa-project.iam.gserviceaccount.com',
      aud: `${TOKEN_HOST}/token`,
      scope: 'https://www.googleapis.com/auth/cloud-platform',
      iat: 1_700_000_000,
      exp: 1_700_003_600,
    });
  });

  it('reuses the token until shortly before it expires, then mints a new one', async () => {
    const { agent, assertions } = tokenEndpoint();
    const adapter = createGoogleAdapter({ tokenCache: createTokenCache() });
    const clock = { now: 1_700_000_000_000 };
    const ctx = vertexCtx(agent, clock, stored({ vertex_service_account_json: JSON.stringify(serviceAccount()) }));
    const [a, b] = await Promise.all([
      adapter.buildRequest('chatComplete', chat, ctx),
      adapter.buildRequest('chatComplete', chat, ctx),
    ]);
    clock.now += 3_000_000; // 50 minutes: still more than 5 minutes left
    const c = await adapter.buildRequest('chatComplete', chat, ctx);
    expect([a.headers.authorization, b.headers.authorization, c.headers.authorization]).toEqual([
      'Bearer ya29.token-1',
      'Bearer ya29.token-1',
      'Bearer ya29.token-1',
    ]);
    clock.now += 400_000; // past expires_in minus the margin
    const d = await adapter.buildRequest('chatComplete', chat, ctx);
    expect(d.headers.authorization).toBe('Bearer ya29.token-2');
    expect(assertions).toHaveLength(2);
  });

  it('never hands a cached token to the same email with another key', async () => {
    const { agent, assertions } = tokenEndpoint();
    const adapter = createGoogleAdapter({ tokenCache: createTokenCache() });
    const clock = { now: 1_700_000_000_000 };
    await adapter.buildRequest(
      'chatComplete',
      chat,
      vertexCtx(agent, clock, stored({ vertex_service_account_json: serviceAccount() })),
    );
    const other = await generateKeyPair('RS256', { extractable: true });
    const impostor = serviceAccount({ private_key: await exportPKCS8(other.privateKey) });
    const req = await adapter.buildRequest(
      'chatComplete',
      chat,
      vertexCtx(agent, clock, stored({ vertex_service_account_json: impostor })),
    );
    expect(req.headers.authorization).toBe('Bearer ya29.token-2');
    expect(assertions).toHaveLength(2);
  });

  it('takes project, region and a base64 service account from client headers', async () => {
    const { agent } = tokenEndpoint();
    const adapter = createGoogleAdapter({ tokenCache: createTokenCache() });
    const headers = {
      'x-service-vertex-project-id': 'header-project',
      'x-service-vertex-region': 'global',
      'x-service-vertex-service-account-json': Buffer.from(JSON.stringify(serviceAccount())).toString('base64'),
    };
    const req = await adapter.buildRequest(
      'chatComplete',
      { ...chat, stream: true },
      vertexCtx(agent, { now: 0 }, { apiKey: 'ignored-when-a-service-account-is-given' }, headers),
    );
    expect(req.url).toBe(
      'https://aiplatform.googleapis.com/v1/projects/header-project/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
    expect(req.headers.authorization).toBe('Bearer ya29.token-1');
  });

  it('uses an access token given as the provider key, and the custom host', async () => {
    const { agent, assertions } = tokenEndpoint();
    const adapter = createGoogleAdapter({ tokenCache: createTokenCache() });
    const req = await adapter.buildRequest(
      'embed',
      { model: 'text-embedding-005', input: ['a', 'b'], dimensions: 256 },
      vertexCtx(agent, { now: 0 }, { apiKey: 'ya29.client-token', customHost: 'http://127.0.0.1:9', ...stored({}) }),
    );
    expect(req.url).toBe(
      'http://127.0.0.1:9/v1/projects/my-project/locations/us-central1/publishers/google/models/text-embedding-005:predict',
    );
    expect(req.headers.authorization).toBe('Bearer ya29.client-token');
    expect(JSON.parse(String(req.body))).toEqual({
      instances: [{ content: 'a' }, { content: 'b' }],
      parameters: { outputDimensionality: 256 },
    });
    expect(assertions).toHaveLength(0);
  });

  it('says what is missing, and refuses hostile region names', async () => {
    const { agent } = tokenEndpoint();
    const adapter = createGoogleAdapter({ tokenCache: createTokenCache() });
    await expect(
      adapter.buildRequest('chatComplete', chat, vertexCtx(agent, { now: 0 }, { apiKey: 't' })),
    ).rejects.toMatchObject({ code: 'PROVIDER_CONFIG', message: expect.stringMatching(/project id .* and a region/) });
    await expect(
      adapter.buildRequest(
        'chatComplete',
        chat,
        vertexCtx(
          agent,
          { now: 0 },
          { apiKey: 't' },
          { 'x-service-vertex-project-id': 'p', 'x-service-vertex-region': 'evil.com/x' },
        ),
      ),
    ).rejects.toMatchObject({ code: 'PROVIDER_CONFIG' });
    await expect(
      adapter.buildRequest('chatComplete', chat, vertexCtx(agent, { now: 0 }, stored({}))),
    ).rejects.toMatchObject({ code: 'PROVIDER_CONFIG', message: expect.stringMatching(/service account/) });
  });

  it('reports a failed token exchange without the assertion or the key', async () => {
    const { agent, assertions } = tokenEndpoint({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' },
    });
    const adapter = createGoogleAdapter({ tokenCache: createTokenCache() });
    const failure = await adapter
      .buildRequest(
        'chatComplete',
        chat,
        vertexCtx(agent, { now: 0 }, stored({ vertex_service_account_json: serviceAccount() })),
      )
      .catch((e: Error) => e);
    expect(failure).toMatchObject({
      code: 'UPSTREAM_ERROR',
      message: `The Vertex AI token exchange at ${TOKEN_HOST} failed with HTTP 400 (invalid_grant: Invalid JWT Signature.).`,
    });
    expect((failure as Error).message).not.toContain(assertions[0]!.slice(0, 20));
  });

  it('parses service accounts without echoing them', () => {
    expect(parseServiceAccount(JSON.stringify(serviceAccount({ token_uri: undefined })), 'x')).toMatchObject({
      tokenUri: 'https://oauth2.googleapis.com/token',
      projectId: 'sa-project',
    });
    expect(() => parseServiceAccount('not json, not base64 json', 'the header')).toThrow(
      'The Vertex AI service account in the header is neither JSON nor base64 of JSON.',
    );
    expect(() => parseServiceAccount({ client_email: 'a' }, 'h')).toThrow(/needs client_email and private_key/);
    expect(() => parseServiceAccount(serviceAccount({ token_uri: 'file:///etc/passwd' }), 'h')).toThrow(
      /http\(s\) URL/,
    );
    const bad = parseServiceAccount(
      serviceAccount({ private_key: '-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----' }),
      'h',
    );
    return expect(createTokenCache().accessToken(bad, 's', new MockAgent(), () => 0)).rejects.toThrow(
      'The private_key of the Vertex AI service account is not a PKCS#8 PEM RSA key.',
    );
  });

  it('passes other paths through to the regional host with the token', async () => {
    const { agent } = tokenEndpoint();
    const adapter = createGoogleAdapter({ tokenCache: createTokenCache() });
    const through = await adapter.passThrough!(
      '/projects/my-project/locations/europe-west4/endpoints',
      'GET',
      vertexCtx(agent, { now: 0 }, { apiKey: 'ya29.t' }, { 'x-service-vertex-region': 'europe-west4' }),
    );
    expect(through).toMatchObject({
      url: 'https://europe-west4-aiplatform.googleapis.com/v1/projects/my-project/locations/europe-west4/endpoints',
      headers: { authorization: 'Bearer ya29.t' },
    });
  });
});
