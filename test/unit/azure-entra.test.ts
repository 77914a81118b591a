import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  DEFAULT_ENTRA_SCOPE,
  EntraTokenError,
  createEntraTokenSource,
  entraAuthHeaders,
  readEntraInputs,
  type EntraInputs,
} from '../../src/providers/azure-entra.js';

const SECRET = 'very-secret-value~42';

interface TokenCall {
  url: string;
  contentType: string | undefined;
  form: URLSearchParams;
}

/** A loopback stand-in for login.microsoftonline.com's v2.0 token endpoint. */
async function startTokenMock(answer: (call: TokenCall, n: number) => { status: number; body: unknown }) {
  const calls: TokenCall[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    const call = { url: req.url ?? '', contentType: req.headers['content-type'], form: new URLSearchParams(raw) };
    calls.push(call);
    const { status, body } = answer(call, calls.length);
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => res.destroy(error as Error));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const dispatcher = new Agent();
  onTestFinished(() => dispatcher.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls, dispatcher };
}

const okToken = (_call: TokenCall, n: number) => ({
  status: 200,
  body: { token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: `token-${n}` },
});

function inputs(authorityHost: string, overrides: Partial<EntraInputs> = {}): EntraInputs {
  return {
    tenantId: 'contoso.onmicrosoft.com',
    clientId: 'app-1',
    clientSecret: SECRET,
    scope: DEFAULT_ENTRA_SCOPE,
    authorityHost,
    ...overrides,
  };
}

describe('readEntraInputs', () => {
  const config = { azure_tenant_id: 'tenant-a', azure_client_id: 'client-a', azure_client_secret: 'secret-a' };

  it('is null without Entra fields (api-key auth), reads configurations first, then headers', () => {
    expect(readEntraInputs({ resource_name: 'x' }, {})).toBeNull();
    expect(readEntraInputs(config, { 'x-service-azure-tenant-id': 'tenant-h' })).toEqual({
      tenantId: 'tenant-a',
      clientId: 'client-a',
      clientSecret: 'secret-a',
      scope: DEFAULT_ENTRA_SCOPE,
      authorityHost: 'https://login.microsoftonline.com',
    });
    const fromHeaders = readEntraInputs(
      undefined,
      {
        'x-service-azure-tenant-id': 'tenant-h',
        'x-service-azure-client-id': 'client-h',
        'x-service-azure-client-secret': 'secret-h',
      },
      'api://custom/.default',
    );
    expect(fromHeaders).toMatchObject({
      tenantId: 'tenant-h',
      clientId: 'client-h',
      clientSecret: 'secret-h',
      scope: 'api://custom/.default',
    });
  });

  it('defaults the scope to Azure AI services and takes the authority host from configurations only', () => {
    expect(DEFAULT_ENTRA_SCOPE).toBe('https://cognitiveservices.azure.com/.default');
    expect(
      readEntraInputs({ ...config, azure_authority_host: 'https://login.microsoftonline.us/' }, {}, undefined)
        ?.authorityHost,
    ).toBe('https://login.microsoftonline.us');
    expect(() => readEntraInputs({ ...config, azure_authority_host: 'ftp://x' }, {})).toThrow(/azure_authority_host/);
  });

  it('names the missing fields of a partial set, and refuses a tenant id that is not a path segment', () => {
    expect(() => readEntraInputs({ azure_tenant_id: 't' }, {})).toThrow(/azure_client_id, azure_client_secret/);
    expect(() => readEntraInputs(undefined, { 'x-service-azure-client-id': 'c' })).toThrow(
      /x-service-azure-tenant-id, x-service-azure-client-secret/,
    );
    expect(() => readEntraInputs({ ...config, azure_tenant_id: '../evil' }, {})).toThrow(/tenant id/);
  });
});

describe('Entra ID token source', () => {
  it('posts the client-credentials form to {authority}/{tenant}/oauth2/v2.0/token and returns bearer headers', async () => {
    const mock = await startTokenMock(okToken);
    const source = createEntraTokenSource({ dispatcher: mock.dispatcher, now: () => 1_000 });
    expect(await entraAuthHeaders(inputs(mock.url), { now: () => 1_000, source })).toEqual({
      authorization: 'Bearer token-1',
    });
    expect(mock.calls[0]!.url).toBe('/contoso.onmicrosoft.com/oauth2/v2.0/token');
    expect(mock.calls[0]!.contentType).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(mock.calls[0]!.form)).toEqual({
      grant_type: 'client_credentials',
      client_id: 'app-1',
      client_secret: SECRET,
      scope: DEFAULT_ENTRA_SCOPE,
    });
    expect(await entraAuthHeaders(null, { now: () => 0, source })).toBeNull();
  });

  it('caches the token until shortly before expiry, then fetches a new one', async () => {
    const mock = await startTokenMock(okToken);
    let now = 0;
    const source = createEntraTokenSource({ dispatcher: mock.dispatcher, now: () => now });
    expect(await source.token(inputs(mock.url))).toBe('token-1');
    now = 3599_000 - 5 * 60_000 - 1;
    expect(await source.token(inputs(mock.url))).toBe('token-1');
    expect(mock.calls).toHaveLength(1);
    now = 3599_000 - 5 * 60_000;
    expect(await source.token(inputs(mock.url))).toBe('token-2');
    expect(mock.calls).toHaveLength(2);
  });

  it('keys the cache by tenant, client, scope and secret, and shares one request between concurrent callers', async () => {
    const mock = await startTokenMock(okToken);
    const source = createEntraTokenSource({ dispatcher: mock.dispatcher, now: () => 0 });
    const [a, b] = await Promise.all([source.token(inputs(mock.url)), source.token(inputs(mock.url))]);
    expect(a).toBe(b);
    expect(mock.calls).toHaveLength(1);
    await source.token(inputs(mock.url, { scope: 'api://other/.default' }));
    await source.token(inputs(mock.url, { clientId: 'app-2' }));
    await source.token(inputs(mock.url, { clientSecret: 'a-wrong-secret' }));
    expect(mock.calls).toHaveLength(4);
  });

  it('turns a token endpoint error into a clear error without the secret, and caches nothing', async () => {
    const mock = await startTokenMock(() => ({
      status: 401,
      body: {
        error: 'invalid_client',
        error_description: `AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value ${SECRET}.`,
        error_codes: [7000215],
        trace_id: 't',
        correlation_id: 'c',
      },
    }));
    const source = createEntraTokenSource({ dispatcher: mock.dispatcher, now: () => 0 });
    const error = (await source.token(inputs(mock.url)).catch((e: unknown) => e)) as EntraTokenError;
    expect(error).toBeInstanceOf(EntraTokenError);
    expect(error.code).toBe('UPSTREAM_ERROR');
    expect(error.tokenStatus).toBe(401);
    expect(error.message).toMatch(/HTTP 401, invalid_client/);
    expect(error.message).toMatch(/AADSTS7000215/);
    expect(error.message).not.toContain(SECRET);
    await source.token(inputs(mock.url)).catch(() => undefined);
    expect(mock.calls).toHaveLength(2);
  });

  it('says when the authority cannot be reached', async () => {
    const mock = await startTokenMock(okToken);
    const source = createEntraTokenSource({ dispatcher: mock.dispatcher, now: () => 0 });
    const error = (await source.token(inputs('http://127.0.0.1:1')).catch((e: unknown) => e)) as EntraTokenError;
    expect(error).toBeInstanceOf(EntraTokenError);
    expect(error.tokenStatus).toBeNull();
    expect(error.message).toMatch(/could not be reached/);
    expect(String((error.cause as Error).message)).not.toContain(SECRET);
  });
});
