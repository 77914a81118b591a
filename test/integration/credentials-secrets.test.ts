import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/principal.js';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { apiClient } from '../helpers/http.js';
import { makeTempDir, startTestServer, type TestServer } from '../helpers/start-test-server.js';

// Distinctive values, so that a search for them cannot match anything else.
const SECRETS = {
  integrationKey: 'sk-proj-INTEGRATIONSECRET-a1b2c3d4e5f6ZZZZ',
  rotatedKey: 'sk-proj-ROTATEDSECRET-f6e5d4c3b2a1YYYY',
  virtualKey: 'sk-vk-VIRTUALSECRET-0a9b8c7d6e5fXXXX',
  rotatedVirtualKey: 'sk-vk-ROTATEDVIRTUAL-5f6e7d8c9b0aWWWW',
  awsSecret: 'AWSSECRETACCESSKEY0123456789abcdefVVVV',
  headerSecret: 'HEADERSECRETTOKEN0123456789UUUU',
  refusedKey: 'sk-proj-REFUSEDSECRET-0123456789TTTT',
};

async function principalOf(t: TestServer, key: string): Promise<Principal> {
  const result = await t.server.keys.verify(key);
  if (!result.ok) throw new Error(`key not valid: ${result.reason}`);
  return result.principal;
}

function expectNoSecret(text: string, where: string): void {
  for (const [name, secret] of Object.entries(SECRETS))
    expect(text.includes(secret), `${name} found in ${where}`).toBe(false);
}

describe('provider keys at rest and in transit', () => {
  it('never returns, audits, logs or stores a provider key in clear', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await createWorkspace(admin, 'Team A', 'team-a');
    const wsKey = await createWorkspaceKey(admin, {
      workspace_id: 'team-a',
      scopes: ['virtual_keys.create', 'virtual_keys.read', 'virtual_keys.list', 'virtual_keys.update'],
    });
    const workspace = apiClient(t.baseUrl, wsKey.key);
    const seen: unknown[] = [];
    const keep = async (call: Promise<{ status: number; body: any }>, status = 200) => {
      const res = await call;
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      seen.push(res.body);
      return res;
    };

    await keep(
      admin.post('/v1/integrations', {
        name: 'Bedrock-ish',
        slug: 'secretive',
        ai_provider_id: 'openai',
        key: SECRETS.integrationKey,
        configurations: {
          aws_secret_access_key: SECRETS.awsSecret,
          aws_region: 'eu-west-1',
          custom_headers: { authorization: `Bearer ${SECRETS.headerSecret}` },
        },
      }),
    );
    await keep(
      workspace.post('/v1/virtual-keys', { name: 'VK', slug: 'vk', provider: 'openai', key: SECRETS.virtualKey }),
    );
    // Refused requests are audited too, with their bodies: the key must be redacted there as well.
    await keep(
      admin.post('/v1/integrations', { name: 'n'.repeat(300), ai_provider_id: 'openai', key: SECRETS.refusedKey }),
      400,
    );
    await keep(
      admin.post('/v1/providers', { name: 'oops', integration_id: 'secretive', key: SECRETS.refusedKey }),
      400,
    );

    const masked = await keep(admin.get('/v1/integrations/secretive'));
    expect(masked.body).toMatchObject({
      masked_key: 'sk-p****ZZZZ',
      configurations: {
        aws_region: 'eu-west-1',
        aws_secret_access_key: 'AWSS****VVVV',
        custom_headers: { authorization: '****' },
      },
    });
    // Sending the masked object back keeps the stored secrets; changing the key replaces it.
    await keep(
      admin.put('/v1/integrations/secretive', { key: SECRETS.rotatedKey, configurations: masked.body.configurations }),
    );
    await keep(workspace.put('/v1/virtual-keys/vk', { key: SECRETS.rotatedVirtualKey }));
    await keep(admin.get('/v1/integrations'));
    await keep(admin.get('/v1/integrations/secretive'));
    await keep(admin.get('/v1/providers'));
    await keep(admin.get('/v1/providers/secretive'));
    await keep(workspace.get('/v1/virtual-keys'));
    await keep(workspace.get('/v1/virtual-keys/vk'));
    await keep(admin.get('/v1/openapi.json'));

    const resolved = await t.server.credentials.resolveProvider(
      await principalOf(t, t.adminKey),
      t.server.bootstrap.workspaceId,
      'secretive',
    );
    expect(resolved.apiKey).toBe(SECRETS.rotatedKey);
    expect(resolved.configurations).toMatchObject({
      aws_secret_access_key: SECRETS.awsSecret,
      custom_headers: { authorization: `Bearer ${SECRETS.headerSecret}` },
    });

    const audit = await keep(admin.get('/v1/audit-logs?page_size=100'));
    const records = (
      audit.body as {
        data: Array<{ resource_type: string; action: string; response_status_code: number; request_body: any }>;
      }
    ).data;
    expect(
      records
        .filter((r) => ['integration', 'provider', 'virtual_key'].includes(r.resource_type))
        .map((r) => [r.resource_type, r.action, r.response_status_code])
        .reverse(),
    ).toEqual([
      ['integration', 'create', 200],
      ['virtual_key', 'create', 200],
      ['integration', 'create', 400],
      ['provider', 'create', 400],
      ['integration', 'update', 200],
      ['virtual_key', 'update', 200],
    ]);
    expect(
      records.find((r) => r.resource_type === 'integration' && r.action === 'create' && r.response_status_code === 200)
        ?.request_body,
    ).toMatchObject({
      key: '[REDACTED]',
      configurations: { aws_secret_access_key: '[REDACTED]', custom_headers: '[REDACTED]', aws_region: 'eu-west-1' },
    });

    expectNoSecret(JSON.stringify(seen), 'API responses');
    expectNoSecret(t.logLines.join('\n'), 'server log');

    const rows = {
      integrations: await t.server.db.selectFrom('integrations').selectAll().execute(),
      virtual_keys: await t.server.db.selectFrom('virtual_keys').selectAll().execute(),
      audit_logs: await t.server.db.selectFrom('audit_logs').selectAll().execute(),
    };
    expect(rows.integrations[0]!.encrypted_key).toMatch(
      /^v1:[A-Za-z0-9_-]{8}:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$/,
    );
    expect(rows.virtual_keys[0]!.encrypted_key).toMatch(/^v1:/);
    expect(JSON.parse(rows.integrations[0]!.configurations).aws_secret_access_key.$sealed).toMatch(/^v1:/);
    expectNoSecret(JSON.stringify(rows), 'database rows');

    await t.close();
    const files = readdirSync(t.dataDir).filter((name) => name.startsWith('svcgw.sqlite'));
    expect(files).toContain('svcgw.sqlite');
    // The rows are in the files that were searched (so the search can find what is there).
    expect(files.some((name) => readFileSync(join(t.dataDir, name)).includes(Buffer.from('sk-p****YYYY')))).toBe(true);
    for (const name of files) {
      const bytes = readFileSync(join(t.dataDir, name));
      for (const [secretName, secret] of Object.entries(SECRETS)) {
        expect(bytes.includes(Buffer.from(secret)), `${secretName} in ${name}`).toBe(false);
      }
    }
  });
});

describe('master key', () => {
  it('is generated once into <data_dir>/master.key with mode 0600 and reused after a restart', async () => {
    const dataDir = makeTempDir();
    const first = await startTestServer({ dataDir });
    const admin = apiClient(first.baseUrl, first.adminKey);
    await admin.post('/v1/integrations', {
      name: 'OpenAI',
      slug: 'openai',
      ai_provider_id: 'openai',
      key: SECRETS.integrationKey,
    });
    await apiClient(first.baseUrl, first.adminKey).post('/v1/virtual-keys', {
      name: 'VK',
      slug: 'vk',
      provider: 'openai',
      key: SECRETS.virtualKey,
    });
    const keyFile = join(dataDir, 'master.key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const keyText = readFileSync(keyFile, 'utf8');
    expect(keyText.trim()).toMatch(/^[0-9a-f]{64}$/);
    expectNoSecret(first.logLines.join('\n'), 'server log');
    expect(first.logLines.join('\n')).not.toContain(keyText.trim());
    expect(first.logLines.filter((line) => line.includes('generated the master key'))).toHaveLength(1);
    await first.close();

    const second = await startTestServer({ dataDir });
    expect(second.server.bootstrap.created).toBe(false);
    expect(readFileSync(keyFile, 'utf8')).toBe(keyText);
    expect(second.logLines.some((line) => line.includes('generated the master key'))).toBe(false);
    const principal = await principalOf(second, first.adminKey);
    expect(
      (await second.server.credentials.resolveProvider(principal, second.server.bootstrap.workspaceId, 'openai'))
        .apiKey,
    ).toBe(SECRETS.integrationKey);
    expect(
      (await second.server.credentials.resolveVirtualKey(principal, second.server.bootstrap.workspaceId, 'vk')).apiKey,
    ).toBe(SECRETS.virtualKey);
  });

  it('comes from SVCGW_MASTER_KEY when set (no file is written), and another key cannot decrypt', async () => {
    const dataDir = makeTempDir();
    const env = { SVCGW_MASTER_KEY: randomBytes(32).toString('base64') };
    const first = await startTestServer({ dataDir, env });
    await apiClient(first.baseUrl, first.adminKey).post('/v1/integrations', {
      name: 'OpenAI',
      slug: 'openai',
      ai_provider_id: 'openai',
      key: SECRETS.integrationKey,
    });
    expect(readdirSync(dataDir)).not.toContain('master.key');
    await first.close();

    const same = await startTestServer({ dataDir, env });
    const principal = await principalOf(same, first.adminKey);
    expect(
      (await same.server.credentials.resolveProvider(principal, same.server.bootstrap.workspaceId, 'openai')).apiKey,
    ).toBe(SECRETS.integrationKey);
    await same.close();

    const other = await startTestServer({ dataDir, env: { SVCGW_MASTER_KEY: randomBytes(32).toString('hex') } });
    await expect(
      other.server.credentials.resolveProvider(principal, other.server.bootstrap.workspaceId, 'openai'),
    ).rejects.toThrow(/different master key/);
  });
});
