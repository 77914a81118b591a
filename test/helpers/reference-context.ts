import { expect } from 'vitest';
import { addUser } from './fixtures.js';
import { apiClient, type ApiClient } from './http.js';
import { startMcpUpstream } from './mcp-upstream.js';
import type { TestServer } from './start-test-server.js';

/**
 * What the reference operations act on, made through svcgw's own paths before the contract
 * test calls them: a workspace and one of each resource, plus a second one (`name:doomed`) of
 * whatever an operation deletes, so that no call depends on the order of the others. Names are
 * those the fixture's `params` and `{{…}}` templates use.
 */
export async function referenceContext(t: TestServer): Promise<{
  context: Record<string, string>;
  workspaceKey: ApiClient;
}> {
  const owner = apiClient(t.baseUrl, t.adminKey);
  const db = t.server.db;
  const organisation = t.server.bootstrap.organisationId;
  const context: Record<string, string> = { organisation };
  const made = async (path: string, body: unknown): Promise<Record<string, any>> => {
    const res = await owner.post(path, body);
    expect(res.status, `setup: POST ${path}: ${JSON.stringify(res.body)}`).toBe(200);
    return res.body as Record<string, any>;
  };
  const twice = async (name: string, make: (suffix: string) => Promise<string>) => {
    context[name] = await make('main');
    context[`${name}:doomed`] = await make('doomed');
  };

  const ws = await made('/v1/workspaces', { name: 'Contract', slug: 'contract' });
  context.workspace = ws.id;
  context.workspaceSlug = ws.slug;
  context['workspace:doomed'] = (await made('/v1/workspaces', { name: 'Contract doomed' })).id;
  const member = [{ workspaceId: ws.id, role: 'member' as const }];
  await twice('user', () => addUser(db, organisation, 'member', member));
  await twice('member', () => addUser(db, organisation, 'member', member));
  context.freeUser = await addUser(db, organisation, 'member');
  await twice('invite', async (suffix) => {
    const body = {
      email: `invitee-${suffix}@example.test`,
      role: 'member',
      workspaces: [{ id: ws.id, role: 'member' }],
    };
    return (await made('/v1/invites', body)).id;
  });
  await twice(
    'apiKey',
    async (suffix) =>
      (
        await made('/v1/api-keys/workspace/service', {
          name: `contract ${suffix}`,
          workspace_id: ws.id,
          scopes: ['completions.write'],
        })
      ).id,
  );
  const wsKey = await made('/v1/api-keys/workspace/service', {
    name: 'contract feedback',
    workspace_id: ws.id,
    scopes: ['feedback.create', 'feedback.update', 'logs.create'],
  });
  await twice(
    'config',
    async (suffix) =>
      (
        await made('/v1/configs', {
          name: `Contract ${suffix}`,
          workspace_id: ws.id,
          config: { retry: { attempts: 1 } },
        })
      ).slug,
  );
  await twice(
    'virtualKey',
    async (suffix) =>
      (
        await made('/v1/virtual-keys', {
          name: `Contract ${suffix}`,
          provider: 'openai',
          key: `sk-contract-${suffix}-0000000000000000`,
          workspace_id: ws.id,
        })
      ).slug,
  );
  await twice('integration', async (suffix) => {
    const created = await made('/v1/integrations', {
      name: `Contract ${suffix}`,
      ai_provider_id: 'openai',
      key: `sk-contract-${suffix}-1111111111111111`,
      create_default_provider: false,
    });
    if (suffix === 'main') context.integrationId = created.id;
    return created.slug;
  });
  await twice(
    'provider',
    async (suffix) =>
      (
        await made('/v1/providers', {
          name: `Contract ${suffix}`,
          integration_id: context.integrationId,
          workspace_id: ws.id,
        })
      ).slug,
  );
  const policy = {
    workspace_id: ws.id,
    conditions: [{ key: 'workspace_id', value: ws.id }],
    group_by: [{ key: 'api_key' }],
  };
  await twice(
    'rlPolicy',
    async () => (await made('/v1/policies/rate-limits', { ...policy, type: 'requests', unit: 'rpm', value: 100 })).id,
  );
  await twice(
    'ulPolicy',
    async () => (await made('/v1/policies/usage-limits', { ...policy, type: 'cost', credit_limit: 10 })).id,
  );
  context.ulEntity = context.apiKey!;
  await twice(
    'collection',
    async (suffix) => (await made('/v1/collections', { name: `Contract ${suffix}`, workspace_id: ws.id })).id,
  );
  await twice(
    'label',
    async (suffix) => (await made('/v1/labels', { name: `contract-${suffix}`, workspace_id: ws.id })).id,
  );
  await twice('prompt', async (suffix) => {
    const created = await made('/v1/prompts', {
      name: `Contract ${suffix}`,
      workspace_id: ws.id,
      collection_id: context.collection,
      string: 'Answer this: {{question}}',
      model: 'gpt-4o-mini',
    });
    if (suffix === 'main') context.promptVersion = created.version_id;
    return created.id;
  });
  await twice(
    'partial',
    async (suffix) =>
      (
        await made('/v1/prompts/partials', {
          name: `Contract ${suffix}`,
          string: 'Regards, {{name}}',
          workspace_id: ws.id,
        })
      ).id,
  );
  await twice(
    'guardrail',
    async (suffix) =>
      (
        await made('/v1/guardrails', {
          name: `Contract ${suffix}`,
          workspace_id: ws.id,
          checks: [{ id: 'default.regexMatch', parameters: { rule: 'secret-[0-9]+' } }],
          actions: { deny: true, async: false },
        })
      ).id,
  );

  // MCP: integrations point at a real MCP server (official SDK, 127.0.0.1) that has the `search`
  // tool the reference's examples switch, so capability lists, metadata and `/test` answer from
  // a real sync. The main integration is shared with the workspace, where the servers are made.
  const upstream = await startMcpUpstream();
  upstream.catalogue.tools.push('search');
  await twice('mcpIntegration', async (suffix) => {
    const created = await made('/v1/mcp-integrations', {
      name: `Contract MCP ${suffix}`,
      url: upstream.url,
      transport: 'http',
      auth_type: 'none',
    });
    const synced = await t.server.mcp.sync.sync(created.id);
    expect(synced.ok, `setup: sync of MCP integration ${suffix}`).toBe(true);
    return created.id;
  });
  const shared = await owner.put(`/v1/mcp-integrations/${context.mcpIntegration}/workspaces`, {
    workspaces: [{ id: ws.id, enabled: true }],
  });
  expect(shared.status, `setup: share the MCP integration: ${JSON.stringify(shared.body)}`).toBe(200);
  await twice(
    'mcpServer',
    async (suffix) =>
      (
        await made('/v1/mcp-servers', {
          name: `Contract MCP server ${suffix}`,
          mcp_integration_id: context.mcpIntegration,
          workspace_id: ws.id,
        })
      ).id,
  );

  await twice(
    'secretReference',
    async (suffix) =>
      (
        await made('/v1/secret-references', {
          name: `Contract secret ${suffix}`,
          manager_type: 'hashicorp_vault',
          auth_config: {
            vault_auth_type: 'token',
            vault_addr: 'https://vault.example.com:8200',
            vault_token: `hvs.contract-${suffix}`,
          },
          secret_path: `secret/contract-${suffix}`,
        })
      ).id,
  );
  // A SCIM group mapping by group name (the group need not exist yet); only the doomed one is used.
  context['scimMapping:doomed'] = (
    await made('/v1/scim/workspaces', { workspace_id: ws.id, role: 'member', scim_group_name: 'Contract doomed' })
  ).id;

  // A request log (with a trace for feedback), a finished export and two drafts.
  const now = Date.now();
  context.from = new Date(now - 86_400_000).toISOString();
  context.to = new Date(now + 3_600_000).toISOString();
  context.traceId = 'contract-trace';
  const writer = apiClient(t.baseUrl, wsKey.key);
  const logged = await writer.post('/v1/logs', {
    request: { url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [] } },
    response: { body: { usage: { prompt_tokens: 3, completion_tokens: 1 } } },
    metadata: { trace_id: context.traceId, team: 'platform', _user: 'contract-user' },
  });
  expect(logged.status, JSON.stringify(logged.body)).toBe(200);
  context.log = (await owner.get(`/v1/logs?trace_id=${context.traceId}`)).body.data[0].id;
  const exportBody = {
    workspace_id: ws.id,
    filters: { time_of_generation_min: context.from, time_of_generation_max: context.to },
    requested_data: ['id', 'created_at', 'ai_model'],
  };
  await twice('export', async () => (await made('/v1/logs/exports', exportBody)).id);
  context['export:done'] = (await made('/v1/logs/exports', exportBody)).id;
  await owner.post(`/v1/logs/exports/${context['export:done']}/start`);
  for (let i = 0; i < 100; i++) {
    if ((await owner.get(`/v1/logs/exports/${context['export:done']}`)).body.status === 'success') break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const feedback = await writer.post('/v1/feedback', { trace_id: context.traceId, value: 3 });
  expect(feedback.status, JSON.stringify(feedback.body)).toBe(200);
  context.feedback = feedback.body.feedback_ids[0];
  return { context, workspaceKey: writer };
}
