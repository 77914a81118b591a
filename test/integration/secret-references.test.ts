import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/start-test-server.js';
import { chat, expectRefused, startTenantPair } from '../helpers/tenant-pair.js';

// Distinctive values, so that a search for them cannot match anything else.
const AWS_SECRET = 'AWSSECRETKEY-a1b2c3d4e5f6g7h8i9j0-ZZZZ';
const VAULT_SECRET_ID = 'VAULTSECRETID-0f1e2d3c4b5a-YYYY';
const VAULT_TOKEN = 'hvs.VAULTTOKEN-9a8b7c6d5e4f-XXXX';
const AZURE_SECRET = 'AZURECLIENTSECRET-77665544-WWWW';

const awsReference = (overrides: Record<string, unknown> = {}) => ({
  name: 'OpenAI key in AWS',
  slug: 'openai-aws',
  manager_type: 'aws_sm',
  auth_config: {
    aws_auth_type: 'accessKey',
    aws_access_key_id: 'AKIAEXAMPLE123',
    aws_secret_access_key: AWS_SECRET,
    aws_region: 'eu-west-1',
  },
  secret_path: 'prod/openai',
  secret_key: 'api_key',
  tags: { env: 'prod', team: 'ml' },
  ...overrides,
});

const vaultReference = (overrides: Record<string, unknown> = {}) => ({
  name: 'Anthropic key in Vault',
  slug: 'anthropic-vault',
  manager_type: 'hashicorp_vault',
  auth_config: {
    vault_auth_type: 'approle',
    vault_addr: 'https://vault.example.com:8200',
    vault_role_id: 'role-123',
    vault_secret_id: VAULT_SECRET_ID,
  },
  secret_path: 'secret/anthropic',
  ...overrides,
});

describe('secret references: create, read, list, update', () => {
  it('stores a reference, shows its auth_config secrets masked only, and keeps them when the mask is sent back', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);

    const created = await admin.post('/v1/secret-references', awsReference({ description: 'the prod key' }));
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toEqual({ id: expect.any(String), slug: 'openai-aws', object: 'secret-reference' });

    const byId = await admin.get(`/v1/secret-references/${created.body.id}`);
    const bySlug = await admin.get('/v1/secret-references/openai-aws');
    expect(byId.body).toEqual(bySlug.body);
    expect(byId.body).toEqual({
      id: created.body.id,
      organisation_id: t.server.bootstrap.organisationId,
      name: 'OpenAI key in AWS',
      slug: 'openai-aws',
      description: 'the prod key',
      manager_type: 'aws_sm',
      auth_config: {
        aws_auth_type: 'accessKey',
        aws_access_key_id: 'AKIAEXAMPLE123',
        aws_secret_access_key: 'AWSS****ZZZZ',
        aws_region: 'eu-west-1',
      },
      secret_path: 'prod/openai',
      secret_key: 'api_key',
      allow_all_workspaces: true,
      allowed_workspaces: [],
      tags: { env: 'prod', team: 'ml' },
      status: 'active',
      created_by: expect.any(String),
      created_at: expect.any(String),
      last_updated_at: expect.any(String),
      object: 'secret-reference',
    });

    // GET → edit another field → PUT the object back: the stored secret stays.
    const auth = { ...byId.body.auth_config, aws_region: 'us-east-2' };
    expect((await admin.put('/v1/secret-references/openai-aws', { auth_config: auth, name: 'Renamed' })).status).toBe(
      200,
    );
    const row = await t.server.db
      .selectFrom('secret_references')
      .selectAll()
      .where('id', '=', created.body.id)
      .executeTakeFirstOrThrow();
    expect(row.auth_config).not.toContain(AWS_SECRET);
    expect(JSON.parse(row.auth_config).aws_secret_access_key).toEqual({
      $sealed: expect.any(String),
      hint: 'AWSS****ZZZZ',
    });
    const after = await admin.get('/v1/secret-references/openai-aws');
    expect(after.body).toMatchObject({ name: 'Renamed', auth_config: { aws_region: 'us-east-2' } });
    // A new secret replaces it.
    await admin.put('/v1/secret-references/openai-aws', {
      auth_config: { ...auth, aws_secret_access_key: 'ANOTHERSECRETKEY-0000000000-VVVV' },
    });
    expect((await admin.get('/v1/secret-references/openai-aws')).body.auth_config.aws_secret_access_key).toBe(
      'ANOT****VVVV',
    );

    // Nothing secret in any answer, record, log line or the database file.
    await admin.post('/v1/secret-references', vaultReference());
    await admin.post('/v1/secret-references', {
      ...vaultReference({ slug: 'vault-token' }),
      auth_config: { vault_auth_type: 'token', vault_addr: 'https://vault.example.com', vault_token: VAULT_TOKEN },
    });
    await admin.post('/v1/secret-references', {
      name: 'Azure',
      manager_type: 'azure_kv',
      auth_config: {
        azure_auth_mode: 'entra',
        azure_entra_tenant_id: 'tenant',
        azure_entra_client_id: 'client',
        azure_entra_client_secret: AZURE_SECRET,
        azure_vault_url: 'https://my-vault.vault.azure.net',
      },
      secret_path: 'openai-key',
    });
    // A refused request is audited with its body: its secrets must be redacted there too.
    expect((await admin.post('/v1/secret-references', vaultReference({ name: '' }))).status).toBe(400);
    const seen = JSON.stringify([
      (await admin.get('/v1/secret-references?page_size=100')).body,
      (await admin.get('/v1/audit-logs?page_size=100')).body,
      t.logLines,
    ]);
    for (const secret of [AWS_SECRET, VAULT_SECRET_ID, VAULT_TOKEN, AZURE_SECRET]) expect(seen).not.toContain(secret);
    // The SQLite file and its write-ahead log (absent on PostgreSQL).
    for (const name of readdirSync(t.dataDir).filter((file) => file.startsWith('svcgw.sqlite'))) {
      const bytes = readFileSync(join(t.dataDir, name)).toString('latin1');
      for (const secret of [AWS_SECRET, VAULT_SECRET_ID, VAULT_TOKEN, AZURE_SECRET])
        expect(bytes).not.toContain(secret);
    }

    const audit = (await admin.get('/v1/audit-logs?page_size=100')).body.data.filter(
      (r: any) => r.resource_type === 'secret_reference',
    );
    expect(audit.map((r: any) => [r.action, r.response_status_code]).reverse()).toEqual([
      ['create', 200],
      ['update', 200],
      ['update', 200],
      ['create', 200],
      ['create', 200],
      ['create', 200],
      ['create', 400],
    ]);
    expect(audit[0].request_body.auth_config.vault_secret_id).toBe('[REDACTED]');
  });

  it('lists with the list envelope, filters by manager_type, tags and search, and pages', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    await admin.post('/v1/secret-references', awsReference());
    await admin.post(
      '/v1/secret-references',
      awsReference({ name: 'Groq key', slug: 'groq-aws', tags: { env: 'dev' } }),
    );
    await admin.post('/v1/secret-references', vaultReference({ tags: { env: 'prod' } }));

    const all = await admin.get('/v1/secret-references');
    expect(all.body).toMatchObject({ object: 'list', total: 3 });
    expect(all.body.data.map((r: any) => r.slug)).toEqual(['openai-aws', 'groq-aws', 'anthropic-vault']);
    const slugs = async (query: string) =>
      (await admin.get(`/v1/secret-references?${query}`)).body.data.map((r: any) => r.slug);
    expect(await slugs('manager_type=aws_sm')).toEqual(['openai-aws', 'groq-aws']);
    expect(await slugs('tags=env:prod')).toEqual(['openai-aws', 'anthropic-vault']);
    expect(await slugs('tags=env:prod,team:ml')).toEqual(['openai-aws']);
    expect(await slugs('search=GROQ')).toEqual(['groq-aws']);
    expect(await slugs('page_size=2&current_page=1')).toEqual(['anthropic-vault']);
    expectRefused(await admin.get('/v1/secret-references?manager_type=gcp'), 400, 'INVALID_REQUEST', 'manager_type');
  });

  it('refuses bad bodies with 400 naming the field, and unknown references with 404', async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const refused = async (body: unknown, param: string, code = 'INVALID_REQUEST', status = 400) =>
      expectRefused(await admin.post('/v1/secret-references', body), status, code, param);

    await refused(awsReference({ manager_type: 'gcp_sm' }), 'manager_type');
    await refused(
      awsReference({ auth_config: { aws_auth_type: 'password', aws_region: 'eu-west-1' } }),
      'auth_config.aws_auth_type',
    );
    await refused(
      awsReference({ auth_config: { aws_auth_type: 'token', vault_token: 'x' } }),
      'auth_config.aws_auth_type',
    );
    await refused(
      awsReference({ auth_config: { aws_auth_type: 'accessKey', aws_access_key_id: 'AKIA', aws_region: 'eu-west-1' } }),
      'auth_config.aws_secret_access_key',
    );
    await refused(
      awsReference({
        auth_config: { aws_auth_type: 'assumedRole', aws_role_arn: 'not-an-arn', aws_region: 'eu-west-1' },
      }),
      'auth_config.aws_role_arn',
    );
    await refused(
      vaultReference({ auth_config: { vault_auth_type: 'token', vault_addr: 'ftp://vault', vault_token: 'x' } }),
      'auth_config.vault_addr',
    );
    await refused(
      vaultReference({
        auth_config: { vault_auth_type: 'token', vault_addr: 'https://v', vault_token: 'x', vault_tokne: 'typo' },
      }),
      'auth_config.vault_tokne',
    );
    await refused(
      {
        name: 'Azure over http',
        manager_type: 'azure_kv',
        auth_config: { azure_auth_mode: 'default', azure_vault_url: 'http://vault.example.com' },
        secret_path: 'key',
      },
      'auth_config.azure_vault_url',
    );
    await refused(vaultReference({ secret_path: 'just-a-mount' }), 'secret_path');
    await refused(vaultReference({ secret_path: 'secret/../other' }), 'secret_path');
    await refused(
      {
        name: 'Azure',
        manager_type: 'azure_kv',
        auth_config: { azure_auth_mode: 'default', azure_vault_url: 'https://v.vault.azure.net' },
        secret_path: 'under_scores_are_not_allowed',
      },
      'secret_path',
    );
    await refused(awsReference({ secret_path: 'x'.repeat(1025) }), 'secret_path');
    await refused(awsReference({ name: 'n'.repeat(256) }), 'name');
    await refused(awsReference({ allow_all_workspaces: true, allowed_workspaces: ['default'] }), 'allowed_workspaces');
    await refused(awsReference({ allow_all_workspaces: false }), 'allowed_workspaces');
    await refused(awsReference({ allowed_workspaces: [] }), 'allowed_workspaces');
    await refused(awsReference({ allowed_workspaces: ['nowhere'] }), 'allowed_workspaces[0]', 'NOT_FOUND', 404);
    await refused(awsReference({ colour: 'blue' }), 'body');
    await refused(awsReference({ slug: '123e4567-e89b-12d3-a456-426614174000' }), 'slug');

    expect((await admin.post('/v1/secret-references', awsReference())).status).toBe(200);
    await refused(awsReference(), 'slug', 'CONFLICT', 409);
    expect((await admin.get('/v1/secret-references')).body.total).toBe(1);

    expectRefused(await admin.get('/v1/secret-references/nothing-here'), 404, 'NOT_FOUND');
    expectRefused(await admin.put('/v1/secret-references/nothing-here', { name: 'x' }), 404, 'NOT_FOUND');
    expectRefused(await admin.delete('/v1/secret-references/nothing-here'), 404, 'NOT_FOUND');
    expectRefused(await admin.put('/v1/secret-references/openai-aws', {}), 400, 'INVALID_REQUEST');
    // The manager type is fixed: auth_config must fit the one the reference has.
    expectRefused(
      await admin.put('/v1/secret-references/openai-aws', {
        auth_config: { vault_auth_type: 'token', vault_addr: 'https://v', vault_token: 'x' },
      }),
      400,
      'INVALID_REQUEST',
      'auth_config.aws_auth_type',
    );
    expectRefused(
      await admin.put('/v1/secret-references/openai-aws', { manager_type: 'hashicorp_vault' }),
      400,
      'INVALID_REQUEST',
      'body',
    );
  });

  it("takes the reference's auth_config without its method field when only one method fits the fields", async () => {
    const t = await startTestServer();
    const admin = apiClient(t.baseUrl, t.adminKey);
    const methodOf = async (body: Record<string, unknown>) => {
      const created = await admin.post('/v1/secret-references', body);
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      return (await admin.get(`/v1/secret-references/${created.body.id}`)).body.auth_config;
    };

    // The reference's Vault token example, as its docs give it.
    expect(
      await methodOf(
        vaultReference({
          slug: 'vault-token',
          auth_config: { vault_addr: 'https://vault.example.com:8200', vault_token: VAULT_TOKEN },
        }),
      ),
    ).toEqual({ vault_auth_type: 'token', vault_addr: 'https://vault.example.com:8200', vault_token: 'hvs.****XXXX' });
    const approle = vaultReference({ slug: 'vault-approle' });
    const { vault_auth_type: _named, ...approleFields } = approle.auth_config as Record<string, unknown>;
    expect(await methodOf({ ...approle, auth_config: approleFields })).toMatchObject({ vault_auth_type: 'approle' });
    const { aws_auth_type: _aws, ...accessKeyFields } = awsReference().auth_config as Record<string, unknown>;
    expect(await methodOf(awsReference({ slug: 'aws-key', auth_config: accessKeyFields }))).toMatchObject({
      aws_auth_type: 'accessKey',
      aws_secret_access_key: 'AWSS****ZZZZ',
    });
    const azure = {
      name: 'Azure app',
      slug: 'azure-app',
      manager_type: 'azure_kv',
      secret_path: 'openai-key',
      auth_config: {
        azure_entra_tenant_id: 'tenant-1',
        azure_entra_client_id: 'client-1',
        azure_entra_client_secret: AZURE_SECRET,
        azure_vault_url: 'https://my-vault.vault.azure.net',
      },
    };
    expect(await methodOf(azure)).toMatchObject({ azure_auth_mode: 'entra' });

    // A missing field is reported against the one method that has the fields given.
    expectRefused(
      await admin.post(
        '/v1/secret-references',
        vaultReference({ slug: 'no-addr', auth_config: { vault_token: VAULT_TOKEN } }),
      ),
      400,
      'INVALID_REQUEST',
      'auth_config.vault_addr',
    );
    // Only a vault URL: the managed identity and Azure's default chain both fit.
    const ambiguous = await admin.post('/v1/secret-references', {
      ...azure,
      slug: 'azure-which',
      auth_config: { azure_vault_url: 'https://my-vault.vault.azure.net' },
    });
    expectRefused(ambiguous, 400, 'INVALID_REQUEST', 'auth_config');
    expect(ambiguous.body.error.message).toContain('managed, default');
    expect(ambiguous.body.error.message).toContain('azure_auth_mode');
    // An update infers the same way.
    expect(
      (
        await admin.put('/v1/secret-references/vault-token', {
          auth_config: { vault_addr: 'https://vault.example.com:8200', vault_role: 'gateway' },
        })
      ).status,
    ).toBe(200);
    expect((await admin.get('/v1/secret-references/vault-token')).body.auth_config).toEqual({
      vault_auth_type: 'kubernetes',
      vault_addr: 'https://vault.example.com:8200',
      vault_role: 'gateway',
    });
  });

  it('refuses sign-ins with the server identity when secret_manager_ambient_credentials is off', async () => {
    const t = await startTestServer({ env: { SVCGW_SECRET_MANAGER_AMBIENT_CREDENTIALS: 'OFF' } });
    const admin = apiClient(t.baseUrl, t.adminKey);
    expectRefused(
      await admin.post(
        '/v1/secret-references',
        awsReference({ auth_config: { aws_auth_type: 'serviceRole', aws_region: 'eu-west-1' } }),
      ),
      400,
      'INVALID_REQUEST',
      'auth_config.aws_auth_type',
    );
    expectRefused(
      await admin.post(
        '/v1/secret-references',
        vaultReference({ auth_config: { vault_auth_type: 'kubernetes', vault_addr: 'https://v', vault_role: 'gw' } }),
      ),
      400,
      'INVALID_REQUEST',
      'auth_config.vault_auth_type',
    );
    expect((await admin.post('/v1/secret-references', awsReference())).status).toBe(200);
  });

  it('will not start with a secret_manager_ca_file it cannot read, naming the file', async () => {
    await expect(
      startTestServer({ env: { SVCGW_SECRET_MANAGER_CA_FILE: '/nonexistent/private-ca.pem' }, autoClose: false }),
    ).rejects.toThrow('secret_manager_ca_file /nonexistent/private-ca.pem cannot be read');
  });

  it('is for admin keys of organisation owners and admins holding the secret_references scopes', async () => {
    const pair = await startTenantPair();
    const { g, a } = pair;
    expect((await g.admin.post('/v1/secret-references', awsReference())).status).toBe(200);
    expectRefused(await a.client.get('/v1/secret-references'), 403, 'KEY_TYPE_NOT_ALLOWED');
    expectRefused(
      await a.client.post('/v1/secret-references', awsReference({ slug: 'x' })),
      403,
      'KEY_TYPE_NOT_ALLOWED',
    );
    const narrow = await g.admin.post('/v1/api-keys/organisation/service', {
      name: 'integrations only',
      scopes: ['integrations.list'],
    });
    const limited = apiClient(g.baseUrl, narrow.body.key);
    expectRefused(await limited.get('/v1/secret-references'), 403, 'MISSING_SCOPE');
    expectRefused(await limited.delete('/v1/secret-references/openai-aws'), 403, 'MISSING_SCOPE');
  });
});

describe('secret references in use', () => {
  it('refuses to delete a reference that integrations, virtual keys or a rotation policy use, naming them; deletes (archives) it once free', async () => {
    const { g, a } = await startTenantPair();
    const ref = await g.admin.post('/v1/secret-references', awsReference());
    const integration = await g.admin.post('/v1/integrations', {
      name: 'OpenAI',
      slug: 'openai-prod',
      ai_provider_id: 'openai',
      secret_mappings: [{ target_field: 'key', secret_reference_id: 'openai-aws' }],
    });
    expect(integration.status, JSON.stringify(integration.body)).toBe(200);
    const vk = await a.client.post('/v1/virtual-keys', {
      name: 'A legacy',
      slug: 'a-legacy',
      provider: 'openai',
      secret_mappings: [{ target_field: 'key', secret_reference_id: ref.body.id, secret_key: 'other_key' }],
    });
    expect(vk.status, JSON.stringify(vk.body)).toBe(200);
    expect((await g.admin.get('/v1/integrations/openai-prod')).body.secret_mappings).toEqual([
      { target_field: 'key', secret_reference_id: ref.body.id, secret_key: null, value_format: null },
    ]);
    expect((await a.client.get('/v1/virtual-keys/a-legacy')).body).toMatchObject({
      masked_key: null,
      secret_mappings: [{ target_field: 'key', secret_reference_id: ref.body.id, secret_key: 'other_key' }],
    });

    const refused = await g.admin.delete('/v1/secret-references/openai-aws');
    expectRefused(refused, 400, 'SECRET_REFERENCE_IN_USE');
    expect(refused.body.error.message).toContain('in use by integrations or virtual keys');
    expect(refused.body.error.message).toContain('integration openai-prod');
    expect(refused.body.error.message).toContain('virtual key a-legacy');

    expect((await g.admin.put('/v1/integrations/openai-prod', { secret_mappings: [] })).status).toBe(200);
    expect((await a.client.put('/v1/virtual-keys/a-legacy', { key: 'sk-stored-now-000000000000' })).status).toBe(200);
    expect((await a.client.put('/v1/virtual-keys/a-legacy', { secret_mappings: [] })).status).toBe(200);
    // An API key whose rotations write to the reference uses it too.
    const key = await g.admin.post('/v1/api-keys/organisation/service', {
      name: 'ci key',
      scopes: ['completions.write'],
      rotation_policy: { rotation_period: 'weekly', secret_reference_id: 'openai-aws' },
    });
    expect(key.status, JSON.stringify(key.body)).toBe(200);
    expect((await g.admin.get(`/v1/api-keys/${key.body.id}`)).body.rotation_policy).toMatchObject({
      secret_reference_id: ref.body.id,
      secret_key: null,
    });
    const byKey = await g.admin.delete('/v1/secret-references/openai-aws');
    expectRefused(byKey, 400, 'SECRET_REFERENCE_IN_USE');
    expect(byKey.body.error.message).toContain('API key "ci key"');
    expect((await g.admin.put(`/v1/api-keys/${key.body.id}`, { rotation_policy: null })).status).toBe(200);

    expect((await g.admin.delete('/v1/secret-references/openai-aws')).status).toBe(200);
    expect((await g.admin.get('/v1/secret-references/openai-aws')).body.status).toBe('archived');
    expect((await g.admin.get('/v1/secret-references')).body.total).toBe(0);
    expect((await g.admin.get('/v1/secret-references?status=archived')).body.total).toBe(1);
    // Archived: it cannot be changed or mapped, and its slug is free.
    expectRefused(await g.admin.put('/v1/secret-references/openai-aws', { name: 'x' }), 400, 'INVALID_REQUEST');
    expectRefused(
      await g.admin.put('/v1/integrations/openai-prod', {
        secret_mappings: [{ target_field: 'key', secret_reference_id: ref.body.id }],
      }),
      404,
      'NOT_FOUND',
      'secret_mappings[0].secret_reference_id',
    );
    expect((await g.admin.post('/v1/secret-references', awsReference())).status).toBe(200);
  });

  it('checks mappings: known fields once each, an existing reference, and a key unless one is mapped', async () => {
    const { g, a } = await startTenantPair();
    await g.admin.post('/v1/secret-references', awsReference());
    const integration = (secret_mappings: unknown) =>
      g.admin.post('/v1/integrations', { name: 'OpenAI', ai_provider_id: 'openai', secret_mappings });
    expectRefused(
      await integration([{ target_field: 'configurations.custom_hots', secret_reference_id: 'openai-aws' }]),
      400,
      'INVALID_REQUEST',
      'secret_mappings[0].target_field',
    );
    expectRefused(
      await integration([{ target_field: 'model_config.x', secret_reference_id: 'openai-aws' }]),
      400,
      'INVALID_REQUEST',
      'secret_mappings[0].target_field',
    );
    expectRefused(
      await integration([
        { target_field: 'key', secret_reference_id: 'openai-aws' },
        { target_field: 'key', secret_reference_id: 'openai-aws' },
      ]),
      400,
      'INVALID_REQUEST',
      'secret_mappings[1].target_field',
    );
    expectRefused(
      await integration([{ target_field: 'key', secret_reference_id: 'missing' }]),
      404,
      'NOT_FOUND',
      'secret_mappings[0].secret_reference_id',
    );
    expectRefused(
      await integration([{ target_field: 'key', secret_reference_id: 'openai-aws', value_format: 'yaml' }]),
      400,
      'INVALID_REQUEST',
      'secret_mappings[0].value_format',
    );
    expect((await g.admin.get('/v1/integrations')).body.total).toBe(0);
    expectRefused(
      await a.client.post('/v1/virtual-keys', { name: 'No key', provider: 'openai' }),
      400,
      'INVALID_REQUEST',
      'key',
    );
    expectRefused(
      await a.client.post('/v1/virtual-keys', {
        name: 'No key',
        provider: 'openai',
        secret_mappings: [{ target_field: 'configurations.openai_organization', secret_reference_id: 'openai-aws' }],
      }),
      400,
      'INVALID_REQUEST',
      'key',
    );
    // A rotation target cannot feed a provider key, nor the other way round.
    await g.admin.post('/v1/secret-references', awsReference({ slug: 'rotated-here' }));
    expect(
      (
        await g.admin.post('/v1/api-keys/organisation/service', {
          name: 'rotates into the vault',
          scopes: [],
          rotation_policy: { rotation_period: 'monthly', secret_reference_id: 'rotated-here' },
        })
      ).status,
    ).toBe(200);
    expectRefused(
      await integration([{ target_field: 'key', secret_reference_id: 'rotated-here' }]),
      400,
      'INVALID_REQUEST',
      'secret_mappings[0].secret_reference_id',
    );
    expect((await integration([{ target_field: 'key', secret_reference_id: 'openai-aws' }])).status).toBe(200);
    expectRefused(
      await g.admin.post('/v1/api-keys/organisation/service', {
        name: 'overwrites a provider key',
        scopes: [],
        rotation_policy: { rotation_period: 'monthly', secret_reference_id: 'openai-aws' },
      }),
      400,
      'INVALID_REQUEST',
      'rotation_policy.secret_reference_id',
    );
  });
});

describe('secret references: tenant walls', () => {
  it('lets only the allowed workspaces map a reference, refuses narrowing the list below its users, and refuses use at request time', async () => {
    const { g, a, b } = await startTenantPair();
    const ref = await g.admin.post('/v1/secret-references', awsReference({ allowed_workspaces: ['team-a'] }));
    expect(ref.status, JSON.stringify(ref.body)).toBe(200);
    expect((await g.admin.get('/v1/secret-references/openai-aws')).body).toMatchObject({
      allow_all_workspaces: false,
      allowed_workspaces: [a.id],
    });
    const mapping = [{ target_field: 'key', secret_reference_id: 'openai-aws' }];

    // Virtual keys: the workspace of the key must be allowed.
    expectRefused(
      await b.client.post('/v1/virtual-keys', { name: 'B', provider: 'openai', secret_mappings: mapping }),
      403,
      'SECRET_REFERENCE_FORBIDDEN',
      'secret_mappings[0].secret_reference_id',
    );
    const vk = await a.client.post('/v1/virtual-keys', {
      name: 'A',
      slug: 'a-vk',
      provider: 'openai',
      secret_mappings: mapping,
    });
    expect(vk.status, JSON.stringify(vk.body)).toBe(200);

    // Integrations: every workspace with a provider of it.
    expectRefused(
      await g.admin.post('/v1/integrations', {
        name: 'OpenAI',
        ai_provider_id: 'openai',
        workspace_id: 'team-b',
        secret_mappings: mapping,
      }),
      403,
      'SECRET_REFERENCE_FORBIDDEN',
      'secret_mappings[0].secret_reference_id',
    );
    const integration = await g.admin.post('/v1/integrations', {
      name: 'OpenAI',
      slug: 'shared-openai',
      ai_provider_id: 'openai',
      workspace_id: 'team-a',
      secret_mappings: mapping,
    });
    expect(integration.status, JSON.stringify(integration.body)).toBe(200);
    expectRefused(
      await b.client.post('/v1/providers', { name: 'B', integration_id: 'shared-openai' }),
      403,
      'SECRET_REFERENCE_FORBIDDEN',
      'integration_id',
    );
    // The integration has a provider in team-a only; a mapping its providers cannot all use is refused.
    await g.admin.post('/v1/secret-references', awsReference({ slug: 'b-only', allowed_workspaces: ['team-b'] }));
    expectRefused(
      await g.admin.put('/v1/integrations/shared-openai', {
        secret_mappings: [{ target_field: 'key', secret_reference_id: 'b-only' }],
      }),
      403,
      'SECRET_REFERENCE_FORBIDDEN',
      'secret_mappings[0].secret_reference_id',
    );

    // Narrowing the list below a workspace that uses the reference is refused, naming who uses it.
    const narrowed = await g.admin.put('/v1/secret-references/openai-aws', { allowed_workspaces: ['team-b'] });
    expectRefused(narrowed, 400, 'SECRET_REFERENCE_IN_USE', 'allowed_workspaces');
    expect(narrowed.body.error.message).toContain('team-a (integration shared-openai, virtual key a-vk)');
    expect(
      (await g.admin.put('/v1/secret-references/openai-aws', { allowed_workspaces: ['team-a', 'team-b'] })).status,
    ).toBe(200);
    expect((await g.admin.put('/v1/secret-references/openai-aws', { allow_all_workspaces: true })).status).toBe(200);

    // A list changed behind the API's back (an older version, a hand edit) is still a wall at request time.
    await g.server.db
      .updateTable('secret_references')
      .set({
        allow_all_workspaces: 0,
        allowed_workspaces: JSON.stringify([b.id]),
        last_updated_at: new Date().toISOString(),
      })
      .where('id', '=', ref.body.id)
      .execute();
    g.server.credentials.invalidateAll();
    const before = g.mock.requests.length;
    const refused = await a.client.post('/v1/chat/completions', chat, { 'x-service-virtual-key': 'a-vk' });
    expectRefused(refused, 403, 'SECRET_REFERENCE_FORBIDDEN', 'x-service-virtual-key');
    expect(refused.body.error.message).toContain('openai-aws');
    expectRefused(
      await a.client.post('/v1/chat/completions', chat, { 'x-service-provider': '@shared-openai' }),
      403,
      'SECRET_REFERENCE_FORBIDDEN',
      'x-service-provider',
    );
    // Refused before any call to the secret manager or the provider.
    expect(g.mock.requests.length).toBe(before);
  });

  it('lets only organisation owners and admins name a reference in a rotation policy, for a workspace it allows', async () => {
    const { g, a, b } = await startTenantPair();
    await g.admin.post('/v1/secret-references', awsReference({ allowed_workspaces: ['team-a'] }));
    // A workspace admin (not an organisation admin) may manage keys but not send them to a vault.
    expectRefused(
      await a.client.post('/v1/api-keys/workspace/service', {
        name: 'svc',
        workspace_id: 'team-a',
        scopes: ['completions.write'],
        rotation_policy: { rotation_period: 'weekly', secret_reference_id: 'openai-aws' },
      }),
      403,
      'ROLE_NOT_ALLOWED',
      'rotation_policy.secret_reference_id',
    );
    expectRefused(
      await g.admin.post('/v1/api-keys/workspace/service', {
        name: 'svc',
        workspace_id: 'team-b',
        scopes: ['completions.write'],
        rotation_policy: { rotation_period: 'weekly', secret_reference_id: 'openai-aws' },
      }),
      403,
      'SECRET_REFERENCE_FORBIDDEN',
      'rotation_policy.secret_reference_id',
    );
    expectRefused(
      await g.admin.post('/v1/api-keys/workspace/service', {
        name: 'svc',
        workspace_id: 'team-a',
        scopes: ['completions.write'],
        rotation_policy: { rotation_period: 'weekly', secret_key: 'api_key' },
      }),
      400,
      'INVALID_REQUEST',
      'rotation_policy.secret_key',
    );
    const ok = await g.admin.post('/v1/api-keys/workspace/service', {
      name: 'svc',
      workspace_id: 'team-a',
      scopes: ['completions.write'],
      rotation_policy: { rotation_period: 'weekly', secret_reference_id: 'openai-aws', secret_key: 'svcgw_key' },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(b.slug).toBe('team-b');
  });
});
