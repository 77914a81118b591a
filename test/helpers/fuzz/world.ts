import { WORKSPACE_SCOPES } from '../../../src/auth/scopes.js';
import { addUser, createWorkspace, createWorkspaceKey, validPolicy } from '../fixtures.js';
import { apiClient, type ApiClient, type JsonResponse } from '../http.js';
import type { MockOpenAI } from '../mock-openai-upstream.js';
import type { TestServer } from '../start-test-server.js';
import type { KnownIds } from './schema-values.js';

export interface Caller {
  name: 'admin' | 'workspace' | 'anonymous';
  key: string | null;
}

/** An existing resource that can fill a path parameter. */
export interface KnownId {
  value: string;
  /** A fixture the other properties need (the callers' keys, users, workspaces, the gateway's integration): never changed by fuzzing. */
  kept: boolean;
  /** Belongs to a workspace the workspace key is not in: the workspace caller must never get a 2xx on it. */
  foreign: boolean;
}

/**
 * What the fuzz suite runs against: one server, a mock provider, callers, and an existing
 * resource of every kind (in the workspace key's own workspace and in another one), so that
 * generated requests reach the services and tenant walls.
 */
export interface FuzzWorld {
  baseUrl: string;
  maxBodyBytes: number;
  mock: MockOpenAI;
  callers: Caller[];
  /** Path parameter values by `<first path segment>:<param>` or by `<param>`. */
  ids: Record<string, KnownId[]>;
  known: KnownIds;
  /** Stored provider keys (and the client's provider key): never in an answer of svcgw's own. */
  providerSecrets: string[];
  /** The callers' svcgw API keys: never in any answer, never sent to a provider. */
  callerKeys: string[];
  /** Ways of naming a provider on a gateway request; the first ones reach the mock. */
  providerHeaders: Array<Record<string, string>>;
}

async function must(what: string, response: Promise<JsonResponse>): Promise<any> {
  const res = await response;
  if (res.status !== 200) throw new Error(`fuzz fixture ${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function buildWorld(t: TestServer, mock: MockOpenAI, maxBodyBytes: number): Promise<FuzzWorld> {
  const admin = apiClient(t.baseUrl, t.adminKey);
  const orgId = t.server.bootstrap.organisationId;
  const home = await createWorkspace(admin, 'Fuzz home', 'fuzz-home');
  const other = await createWorkspace(admin, 'Fuzz other', 'fuzz-other');
  const workspaces = (await must('list workspaces', admin.get('/v1/workspaces'))).data as Array<{
    id: string;
    slug: string;
  }>;
  const defaultWs = workspaces.find((w) => w.slug === 'default')!;

  const owner = (await must('list users', admin.get('/v1/users'))).data[0] as { id: string };
  const homeUser = await addUser(t.server.db, orgId, 'member', [{ workspaceId: home.id, role: 'manager' }]);
  const otherUser = await addUser(t.server.db, orgId, 'member', [{ workspaceId: other.id, role: 'member' }]);
  const wsKey = await createWorkspaceKey(admin, {
    workspace_id: home.id,
    user_id: homeUser,
    scopes: [...WORKSPACE_SCOPES],
    name: 'fuzz workspace key',
  });
  const adminKeyId =
    (
      (await must('list keys', admin.get('/v1/api-keys?page_size=1000'))).data as Array<{ id: string; type: string }>
    ).find((k) => k.type.startsWith('organisation'))?.id ?? '';

  const integration = await must(
    'integration',
    admin.post('/v1/integrations', {
      name: 'Mock OpenAI',
      slug: 'mock-openai',
      ai_provider_id: 'openai',
      key: 'sk-fuzz-stored',
      configurations: { custom_host: mock.baseUrl },
    }),
  );
  const spareIntegration = await must(
    'spare integration',
    admin.post('/v1/integrations', { name: 'Spare', slug: 'spare', ai_provider_id: 'openai', key: 'sk-fuzz-spare' }),
  );
  const provider = await must(
    'provider',
    admin.post('/v1/providers', {
      name: 'Spare provider',
      slug: 'spare-provider',
      integration_id: spareIntegration.id,
    }),
  );

  const perWorkspace = async (ws: { id: string; slug: string }, tag: string) => {
    const config = await must(
      `config ${tag}`,
      admin.post('/v1/configs', {
        name: `Config ${tag}`,
        slug: `cfg-${tag}`,
        workspace_id: ws.id,
        config: { provider: '@mock-openai', override_params: { model: 'gpt-4o-mini' } },
      }),
    );
    const vk = await must(
      `virtual key ${tag}`,
      admin.post('/v1/virtual-keys', {
        name: `VK ${tag}`,
        slug: `vk-${tag}`,
        provider: 'openai',
        key: 'sk-fuzz-vk',
        workspace_id: ws.id,
        configurations: { custom_host: mock.baseUrl },
      }),
    );
    const key = await must(
      `service key ${tag}`,
      admin.post('/v1/api-keys/workspace/service', {
        name: `svc ${tag}`,
        workspace_id: ws.id,
        scopes: [...WORKSPACE_SCOPES],
      }),
    );
    const rate = await must(
      `rate policy ${tag}`,
      admin.post(
        '/v1/policies/rate-limits',
        validPolicy({ workspace_id: ws.id, conditions: [{ key: 'workspace_id', value: ws.id }], value: 1_000_000 }),
      ),
    );
    const usage = await must(
      `usage policy ${tag}`,
      admin.post('/v1/policies/usage-limits', {
        workspace_id: ws.id,
        conditions: [{ key: 'workspace_id', value: ws.id }],
        group_by: [{ key: 'workspace_id' }],
        type: 'tokens',
        credit_limit: 1_000_000_000,
      }),
    );
    const exported = await must(
      `export ${tag}`,
      admin.post('/v1/logs/exports', { workspace_id: ws.id, filters: {}, requested_data: ['id'] }),
    );
    return {
      config: config.slug as string,
      vk: vk.slug as string,
      key: key.id as string,
      rate: rate.id as string,
      usage: usage.id as string,
      exported: exported.id as string,
    };
  };
  const own = await perWorkspace(home, 'home');
  const foreign = await perWorkspace(other, 'other');
  const invite = await must(
    'invite',
    admin.post('/v1/invites', {
      email: 'fuzz-invitee@example.test',
      role: 'member',
      workspaces: [{ id: other.id, role: 'member' }],
    }),
  );

  // One gateway call, so that logs and traces exist.
  const viaMock = {
    'x-service-provider': 'openai',
    'x-service-custom-host': mock.baseUrl,
    authorization: 'Bearer sk-fuzz-client',
  };
  await must(
    'gateway call',
    admin.post(
      '/v1/chat/completions',
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      { ...viaMock, 'x-service-trace-id': 'fuzz-trace' },
    ),
  );
  const feedback = await must(
    'feedback',
    apiClient(t.baseUrl, wsKey.key).post('/v1/feedback', { trace_id: 'fuzz-trace', value: 1 }),
  );
  let logIds: string[] = [];
  for (let attempt = 0; attempt < 100 && logIds.length === 0; attempt++) {
    logIds = ((await must('logs', admin.get('/v1/logs'))).data as Array<{ id: string }>).map((l) => l.id);
    if (logIds.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  const id = (value: string, kept = false, isForeign = false): KnownId => ({ value, kept, foreign: isForeign });
  const ids: Record<string, KnownId[]> = {
    workspaceId: [
      id(home.id, true),
      id(home.slug, true),
      id(defaultWs.id, true, true),
      id(other.id, false, true),
      id(other.slug, false, true),
    ],
    apiKeyId: [id(adminKeyId, true), id(wsKey.id, true), id(own.key), id(foreign.key, false, true)],
    userId: [id(owner.id, true), id(homeUser, true), id(otherUser)],
    inviteId: [id(invite.id)],
    rateLimitsPolicyId: [id(own.rate), id(foreign.rate, false, true)],
    policyUsageLimitsId: [id(own.usage), id(foreign.usage, false, true)],
    entityId: [id(home.id), id('workspace_id:' + home.id)],
    'configs:slug': [id(own.config), id(foreign.config, false, true)],
    'integrations:slug': [id(integration.slug, true), id(spareIntegration.slug)],
    'providers:slug': [id(provider.slug)],
    'virtual-keys:slug': [id(own.vk), id(foreign.vk, false, true)],
    version: [id('1'), id('2')],
    logId: logIds.map((l) => id(l)),
    groupBy: [
      'ai_service',
      'model',
      'status_code',
      'api_key',
      'config',
      'workspace',
      'provider',
      'prompt',
      'metadata.team',
    ].map((g) => id(g)),
    id: [id(feedback.id ?? feedback.ids?.[0] ?? 'none')],
    traceId: [id('fuzz-trace')],
    exportId: [id(own.exported), id(foreign.exported, false, true)],
    provider: [id('openai'), id('anthropic')],
    model: [id('gpt-4o'), id('gpt-4o-mini')],
  };
  const known: KnownIds = {
    uuids: [
      home.id,
      other.id,
      defaultWs.id,
      homeUser,
      otherUser,
      own.key,
      foreign.key,
      own.rate,
      foreign.rate,
      own.usage,
      foreign.usage,
      integration.id,
      spareIntegration.id,
    ],
    names: [
      home.slug,
      other.slug,
      'default',
      own.config,
      foreign.config,
      own.vk,
      foreign.vk,
      'mock-openai',
      'spare',
      'fuzz-trace',
    ],
  };
  return {
    baseUrl: t.baseUrl,
    maxBodyBytes,
    mock,
    callers: [
      { name: 'admin', key: t.adminKey },
      { name: 'workspace', key: wsKey.key },
      { name: 'anonymous', key: null },
    ],
    ids,
    known,
    providerSecrets: ['sk-fuzz-stored', 'sk-fuzz-spare', 'sk-fuzz-vk', 'sk-fuzz-client'],
    callerKeys: [t.adminKey, wsKey.key],
    providerHeaders: [
      viaMock,
      { 'x-service-provider': '@mock-openai' },
      { 'x-service-virtual-key': own.vk },
      {
        'x-service-provider': 'openai',
        'x-service-custom-host': mock.baseUrl,
        authorization: 'Bearer k',
        'x-service-config': own.config,
      },
      {},
      { 'x-service-provider': 'no-such-provider', authorization: 'Bearer k' },
      { 'x-service-provider': 'openai', 'x-service-custom-host': 'ftp://example' },
      { 'x-service-provider': '@no-such-integration' },
      { 'x-service-virtual-key': foreign.vk },
      {
        'x-service-provider': 'openai',
        'x-service-custom-host': mock.baseUrl,
        authorization: 'Bearer k',
        'x-service-config': '{"strategy":{"mode":"nope"}}',
      },
    ],
  };
}

export type { ApiClient };
