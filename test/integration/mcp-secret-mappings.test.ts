import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { startMcpUpstream } from '../helpers/mcp-upstream.js';
import { startMockVault } from '../helpers/mock-vault.js';
import { startTestServer } from '../helpers/start-test-server.js';

describe('secret_mappings on MCP integrations (HashiCorp Vault double)', () => {
  it('reads a header from Vault, picks up a rotation at the first 401, and keeps the tenant walls', async () => {
    const clock = createManualClock(Date.parse('2026-06-01T10:00:00Z'));
    const t = await startTestServer({ clock });
    const admin = apiClient(t.baseUrl, t.adminKey);
    const vault = await startMockVault();
    onTestFinished(() => vault.close());
    let accepted = 'Bearer mcp-token-ONE';
    const upstream = await startMcpUpstream({ authorize: (headers) => headers.authorization === accepted });
    vault.put('secret/mcp', { authorization: accepted, other: 'x' });
    const vaultToken = vault.addToken('ops', null);
    const reference = await admin.post('/v1/secret-references', {
      name: 'MCP token',
      slug: 'mcp-vault',
      manager_type: 'hashicorp_vault',
      auth_config: { vault_auth_type: 'token', vault_addr: vault.url, vault_token: vaultToken },
      secret_path: 'secret/mcp',
    });
    expect(reference.status, JSON.stringify(reference.body)).toBe(200);

    // Only the auth configuration's fields can be mapped.
    const wrong = await admin.post('/v1/mcp-integrations', {
      name: 'Wrong',
      url: upstream.url,
      transport: 'http',
      auth_type: 'headers',
      secret_mappings: [{ target_field: 'key', secret_reference_id: 'mcp-vault' }],
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.param).toBe('secret_mappings[0].target_field');

    const created = await admin.post('/v1/mcp-integrations', {
      name: 'From Vault',
      slug: 'from-vault',
      url: upstream.url,
      transport: 'http',
      auth_type: 'headers',
      secret_mappings: [
        {
          target_field: 'configurations.custom_headers.Authorization',
          secret_reference_id: 'mcp-vault',
          secret_key: 'authorization',
        },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const shown = await admin.get('/v1/mcp-integrations/from-vault');
    expect(shown.body.secret_mappings).toEqual([
      expect.objectContaining({
        target_field: 'configurations.custom_headers.Authorization',
        secret_reference_id: reference.body.id,
      }),
    ]);
    expect(JSON.stringify(shown.body)).not.toContain('mcp-token-ONE');
    await admin.put('/v1/mcp-integrations/from-vault/workspaces', {
      workspaces: [],
      global_workspace_access: { enabled: true },
    });
    const server = await admin.post('/v1/mcp-servers', {
      name: 'Vaulted',
      slug: 'vaulted',
      mcp_integration_id: 'from-vault',
    });
    expect(server.status, JSON.stringify(server.body)).toBe(200);

    const key = await createWorkspaceKey(admin, { workspace_id: 'default', scopes: ['mcp.invoke'] });
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/v1/mcp/vaulted/mcp`), {
        requestInit: { headers: { 'x-service-api-key': key.key } },
      }),
    );
    onTestFinished(() => client.close());
    const echo = async () =>
      ((await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).content as Array<{ text: string }>)[0]
        ?.text;
    expect(await echo()).toBe('echo: hi');
    expect(upstream.received.at(-1)?.headers.authorization).toBe('Bearer mcp-token-ONE');

    // Rotated in Vault: the server refuses the old value, svcgw reads the new one and sends the call again.
    const reads = () => vault.calls.filter((c) => c.path.includes('secret/data/mcp')).length;
    const before = reads();
    accepted = 'Bearer mcp-token-TWO';
    vault.put('secret/mcp', { authorization: accepted, other: 'x' });
    clock.advance(11_000);
    expect(await echo()).toBe('echo: hi');
    expect(upstream.received.at(-1)?.headers.authorization).toBe('Bearer mcp-token-TWO');
    expect(reads()).toBe(before + 1);

    // In use: the reference cannot be deleted, nor narrowed below the workspace that uses it.
    const deleted = await admin.delete('/v1/secret-references/mcp-vault');
    expect(deleted.status).toBe(400);
    expect(deleted.body.error.message).toContain('MCP integration from-vault');
    await createWorkspace(admin, 'Team B', 'team-b');
    const narrowed = await admin.put('/v1/secret-references/mcp-vault', { allowed_workspaces: ['team-b'] });
    expect(narrowed.status).toBe(400);
    expect(narrowed.body.error.code).toBe('SECRET_REFERENCE_IN_USE');

    // A reference that does not allow a workspace cannot feed a server there.
    const teamOnly = await admin.post('/v1/secret-references', {
      name: 'Team B only',
      slug: 'team-b-only',
      manager_type: 'hashicorp_vault',
      auth_config: { vault_auth_type: 'token', vault_addr: vault.url, vault_token: vaultToken },
      secret_path: 'secret/mcp',
      allowed_workspaces: ['team-b'],
    });
    expect(teamOnly.status, JSON.stringify(teamOnly.body)).toBe(200);
    const walled = await admin.post('/v1/mcp-integrations', {
      name: 'Walled',
      slug: 'walled',
      url: upstream.url,
      transport: 'http',
      auth_type: 'headers',
      secret_mappings: [
        { target_field: 'configurations.custom_headers', secret_reference_id: 'team-b-only', value_format: 'json' },
      ],
    });
    expect(walled.status, JSON.stringify(walled.body)).toBe(200);
    await admin.put('/v1/mcp-integrations/walled/workspaces', {
      workspaces: [],
      global_workspace_access: { enabled: true },
    });
    const refused = await admin.post('/v1/mcp-servers', {
      name: 'Walled',
      slug: 'walled-server',
      mcp_integration_id: 'walled',
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('SECRET_REFERENCE_FORBIDDEN');
  });
});
