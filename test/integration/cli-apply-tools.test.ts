import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startA2aAgent } from '../helpers/a2a-agent.js';
import { cliAgainstServer, runCliWithInput } from '../helpers/cli.js';
import { startMcpUpstream } from '../helpers/mcp-upstream.js';
import { makeTempDir } from '../helpers/start-test-server.js';

const file = (mcpUrl: string, agentUrl: string) => `
workspaces:
  - { slug: team-a, name: Team A }
secret_references:
  - slug: openai-vault
    name: OpenAI in Vault
    manager_type: hashicorp_vault
    secret_path: secret/openai
    secret_key: api_key
    allowed_workspaces: [team-a]
    auth_config: { vault_auth_type: token, vault_addr: "http://127.0.0.1:8200", vault_token: "\${VAULT_TOKEN}" }
mcp_integrations:
  - slug: up
    name: Upstream
    url: ${mcpUrl}
    auth_type: headers
    configurations: { custom_headers: { X-Api-Key: "\${MCP_KEY}" } }
    workspace_access: { global: false, workspaces: { team-a: true } }
    capabilities: [{ name: shout, enabled: false }]
mcp_servers:
  - slug: tools
    name: Tools
    integration: up
    workspace: team-a
    default_user_access: deny
    capabilities: [{ name: echo, enabled: false }]
agent_integrations:
  - slug: echo-agent
    name: Echo agent
    url: ${agentUrl}
    auth_type: bearer
    configurations: { bearer_token: "\${AGENT_TOKEN}" }
    workspace_access: { global: true }
    skills: [{ id: whisper, enabled: false }]
agent_servers:
  - { slug: echo, name: Echo, integration: echo-agent, workspace: team-a, skills: [{ id: shout, enabled: false }] }
`;

const SECRETS = {
  VAULT_TOKEN: 'hvs.apply-test-token-0123456789',
  MCP_KEY: 'apply-upstream-key',
  AGENT_TOKEN: 'apply-agent-secret',
};

describe('svcgw apply: secret references, MCP and agents', () => {
  it('applies each kind, and a second apply of the same file changes nothing', { timeout: 180_000 }, async () => {
    const { ok, cli, api } = await cliAgainstServer();
    const upstream = await startMcpUpstream({ authorize: (headers) => headers['x-api-key'] === SECRETS.MCP_KEY });
    const agent = await startA2aAgent({ token: SECRETS.AGENT_TOKEN });
    const path = join(makeTempDir(), 'tools.yaml');
    writeFileSync(path, file(upstream.url, agent.url));

    const dry = await ok(['apply', '-f', path, '--dry-run'], SECRETS);
    expect(dry.changed).toBe(false);
    expect((await api.get('/v1/mcp-integrations/up')).status).toBe(404);

    const first = await cli(['apply', '-f', path], SECRETS);
    expect(first.code, first.stderr).toBe(0);
    for (const secret of Object.values(SECRETS)) expect(first.stdout + first.stderr).not.toContain(secret);
    expect(first.stdout).toMatch(/\+ create\s+mcp integration capabilities\s+up/);

    const reference = (await api.get('/v1/secret-references/openai-vault')).body;
    expect(reference.auth_config.vault_token).toBe('hvs.****6789');
    expect(reference.allow_all_workspaces).toBe(false);
    const access = (await api.get('/v1/mcp-integrations/up/workspaces')).body;
    expect(access.data.find((w: { slug: string }) => w.slug === 'team-a')).toMatchObject({ enabled: true });
    const tools = (await api.get('/v1/mcp-servers/tools/capabilities?type=tool')).body.data;
    expect(tools.filter((c: { enabled: boolean }) => !c.enabled).map((c: { name: string }) => c.name)).toEqual([
      'echo',
      'shout',
    ]);
    expect((await api.get('/v1/mcp-servers/tools')).body.default_user_access).toBe('deny');
    const off = async (path: string) =>
      (await api.get(path)).body.data.filter((s: { enabled: boolean }) => !s.enabled).map((s: { id: string }) => s.id);
    expect(await off('/v1/agent-integrations/echo-agent/skills')).toEqual(['whisper']);
    expect(await off('/v1/agent-servers/echo/skills')).toEqual(['shout']);

    const second = await cli(['apply', '-f', path], SECRETS);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/No changes: the server already matches/);

    // A changed field is one update, named.
    writeFileSync(path, file(upstream.url, agent.url).replace('name: Tools', 'name: Team tools'));
    const third = await ok(['apply', '-f', path], SECRETS);
    expect(third.steps.filter((s: { action: string }) => s.action !== 'unchanged')).toEqual([
      { kind: 'mcp_server', name: 'tools', action: 'update', changes: ['name'], state: 'applied' },
    ]);
  });

  it('a dry run fails as the real run would: a server naming an unknown integration', { timeout: 90_000 }, async () => {
    const { cli, api } = await cliAgainstServer();
    const path = join(makeTempDir(), 'bad.yaml');
    writeFileSync(path, 'mcp_servers:\n  - { slug: tools, name: Tools, integration: nowhere }\n');
    for (const args of [
      ['apply', '-f', path, '--dry-run'],
      ['apply', '-f', path],
    ]) {
      const res = await cli(args);
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(/MCP server tools: integration nowhere does not exist and is not in the file/);
    }
    expect((await api.get('/v1/mcp-servers/tools')).status).toBe(404);
    // The file's own mistakes name the document and the field.
    writeFileSync(path, 'agent_servers:\n  - { slug: x, name: X, integration: y }\n');
    const invalid = await cli(['apply', '-f', path]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/bad\.yaml is not a valid apply file:\n {2}agent_servers\.0\.slug: /);
  });
});

describe('svcgw secret-references, jwt, scim tokens', () => {
  it('manages each, secrets from standard input and never printed', { timeout: 120_000 }, async () => {
    const { ok, cli, fails, env } = await cliAgainstServer();
    const created = await runCliWithInput(
      [
        'secret-references',
        'create',
        '--name',
        'Vault key',
        '--slug',
        'vault-key',
        '--manager',
        'hashicorp_vault',
        '--auth',
        'vault_auth_type=token',
        '--auth',
        'vault_addr=http://127.0.0.1:8200',
        '--auth-secret-stdin',
        'vault_token',
        '--path',
        'secret/openai',
      ],
      'hvs.stdin-secret-token-98765\n',
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/Created secret reference vault-key/);
    expect(created.stdout).not.toContain('stdin-secret');
    expect((await ok(['secret-references', 'get', 'vault-key'])).auth_config.vault_token).toBe('hvs.****8765');
    await ok(['secret-references', 'update', 'vault-key', '--auth', 'vault_namespace=team', '--key', 'api_key']);
    const updated = await ok(['secret-references', 'get', 'vault-key']);
    expect(updated).toMatchObject({ secret_key: 'api_key' });
    expect(updated.auth_config).toMatchObject({ vault_namespace: 'team', vault_token: 'hvs.****8765' });
    expect((await cli(['secret-references', 'list'])).stdout).toMatch(/vault-key\s+Vault key\s+hashicorp_vault/);
    await fails(['secret-references', 'create', '--name', 'x', '--manager', 'aws_sm'], 2, /--path is required/);
    await ok(['secret-references', 'delete', 'vault-key', '--yes']);
    expect((await ok(['secret-references', 'get', 'vault-key'])).status).toBe('archived');

    await fails(['jwt', 'get'], 1, /not configured .*HTTP 404/);
    const jwt = await ok([
      'jwt',
      'set',
      '--jwks-url',
      'https://idp.example.com/.well-known/jwks.json',
      '--issuer',
      'https://idp.example.com/',
      '--audience',
      'svcgw',
      '--clock-tolerance',
      '10',
    ]);
    expect(jwt).toMatchObject({ issuer: 'https://idp.example.com/', audience: ['svcgw'], clock_tolerance_seconds: 10 });
    expect((await ok(['jwt', 'get'])).jwks_url).toBe('https://idp.example.com/.well-known/jwks.json');
    await fails(['jwt', 'set', '--issuer', 'https://idp.example.com/'], 2, /the settings need jwks_url, audience/);
    await ok(['jwt', 'delete', '--yes']);

    const token = await ok(['scim', 'tokens', 'create', '--name', 'Okta']);
    expect(token.token).toMatch(/^scim-/);
    const listed = await cli(['scim', 'tokens', 'list']);
    expect(listed.stdout).toMatch(/Okta/);
    expect(listed.stdout).not.toContain(token.token);
    await ok(['scim', 'tokens', 'revoke', token.id, '--yes']);
    expect((await ok(['scim', 'tokens', 'list'])).data[0].status).toBe('revoked');
    await fails(['scim', 'tokens', 'create'], 2, /required option '--name <name>'/);
  });
});
