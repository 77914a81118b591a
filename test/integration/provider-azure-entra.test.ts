import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startGateway } from '../helpers/gateway.js';

const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] };

/** Microsoft's v2.0 token endpoint (client credentials), as documented: form body in, token JSON out. */
async function startTokenEndpoint() {
  const requests: Array<{ url: string; form: URLSearchParams }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      requests.push({ url: req.url ?? '', form });
      if (form.get('client_secret') !== 'entra-secret-value') {
        res.writeHead(401, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            error: 'invalid_client',
            error_description: 'AADSTS7000215: Invalid client secret provided.',
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          token_type: 'Bearer',
          expires_in: 3599,
          ext_expires_in: 3599,
          access_token: `entra-token-${requests.length}`,
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

describe('azure-openai with Microsoft Entra ID', () => {
  it('exchanges client credentials for a token once, sends it as a bearer instead of api-key, with the config’s azure_entra_scope', async () => {
    const g = await startGateway();
    const entra = await startTokenEndpoint();
    const configurations = {
      custom_host: g.mock.url,
      azure_deployment_name: 'gpt4o-prod',
      azure_tenant_id: 'tenant-1',
      azure_client_id: 'client-1',
      azure_client_secret: 'entra-secret-value',
      azure_authority_host: entra.url,
    };
    expect(
      (
        await g.admin.post('/v1/integrations', {
          name: 'Azure',
          slug: 'azure-entra',
          ai_provider_id: 'azure-openai',
          configurations,
        })
      ).status,
    ).toBe(200);
    const config = JSON.stringify({
      provider: '@azure-entra',
      azure_entra_scope: 'https://cognitiveservices.azure.com/.default',
    });
    const client = g.openai({ 'x-service-config': config }, { apiKey: 'unused' });
    await client.chat.completions.create(chat as any);
    await client.chat.completions.create(chat as any);

    expect(entra.requests).toHaveLength(1); // cached until it expires
    expect(entra.requests[0]!.url).toBe('/tenant-1/oauth2/v2.0/token');
    expect(Object.fromEntries(entra.requests[0]!.form)).toMatchObject({
      grant_type: 'client_credentials',
      client_id: 'client-1',
      scope: 'https://cognitiveservices.azure.com/.default',
    });
    const upstream = g.mock.requests[0]!;
    expect(upstream.url).toMatch(/^\/openai\/deployments\/gpt4o-prod\/chat\/completions\?api-version=/);
    expect(upstream.headers.authorization).toBe('Bearer entra-token-1');
    expect(upstream.headers['api-key']).toBeUndefined();
    expect(g.logLines.join('\n')).not.toContain('entra-secret-value');
  });

  it('a refused token exchange is a provider failure (502) whose message has no secret', async () => {
    const g = await startGateway();
    const entra = await startTokenEndpoint();
    const configurations = {
      custom_host: g.mock.url,
      azure_deployment_name: 'd',
      azure_tenant_id: 't',
      azure_client_id: 'c',
      azure_client_secret: 'wrong-secret-value',
      azure_authority_host: entra.url,
    };
    await g.admin.post('/v1/integrations', {
      name: 'Azure',
      slug: 'azure-bad',
      ai_provider_id: 'azure-openai',
      configurations,
    });
    const error = await g
      .openai({ 'x-service-provider': '@azure-bad' }, { apiKey: 'unused' })
      .chat.completions.create(chat as any)
      .catch((e) => e);
    expect(error.status).toBe(502);
    expect(JSON.stringify(error.error)).not.toContain('wrong-secret-value');
    expect(g.mock.requests).toHaveLength(0);
  });
});
