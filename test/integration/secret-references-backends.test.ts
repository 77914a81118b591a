import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { createManualClock } from '../../src/lib/clock.js';
import { startGateway, type GatewayHarness } from '../helpers/gateway.js';
import { KEY_VAULT_RESOURCE, startMockAzure } from '../helpers/mock-azure-key-vault.js';
import { startMockAws } from '../helpers/mock-aws-secrets-manager.js';
import { startMockVault } from '../helpers/mock-vault.js';
import { makeTempDir } from '../helpers/start-test-server.js';
import { chat, expectRefused } from '../helpers/tenant-pair.js';

const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const K8S_JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6c3ZjZ3c6Z3cifQ.c2lnbmF0dXJl';
const PROVIDER_KEY = 'sk-proj-FROM-THE-VAULT-0123456789abcdef';

afterEach(() => vi.unstubAllEnvs());

/**
 * The gateway with the mock OpenAI provider (accepting only PROVIDER_KEY), and test doubles of
 * AWS, Azure and Vault on 127.0.0.1. The server trusts the Azure double's certificate
 * (secret_manager_ca_file), reads its Kubernetes token from a file of the test, and skips the
 * Key Vault challenge's domain check (the double's address is not in vault.azure.net).
 */
async function setup(options: { clock?: ReturnType<typeof createManualClock> } = {}) {
  const aws = await startMockAws();
  onTestFinished(() => aws.close());
  const azure = await startMockAzure({ tenant: TENANT });
  onTestFinished(() => azure.close());
  const vault = await startMockVault();
  onTestFinished(() => vault.close());
  const dir = makeTempDir();
  writeFileSync(join(dir, 'ca.pem'), azure.cert);
  writeFileSync(join(dir, 'k8s-token'), `${K8S_JWT}\n`);
  // The default AWS chain must find only what a test gives it: no profile files, no instance metadata.
  vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', join(dir, 'no-credentials'));
  vi.stubEnv('AWS_CONFIG_FILE', join(dir, 'no-config'));
  vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
  for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', 'AWS_REGION'])
    vi.stubEnv(name, '');
  const g = await startGateway({
    env: {
      SVCGW_SECRET_MANAGER_CA_FILE: join(dir, 'ca.pem'),
      SVCGW_SECRET_MANAGER_AZURE_CHALLENGE_VERIFICATION: 'OFF',
      SVCGW_VAULT_KUBERNETES_TOKEN_PATH: join(dir, 'k8s-token'),
    },
    mock: { apiKey: PROVIDER_KEY },
    ...(options.clock ? { clock: options.clock } : {}),
  });
  return { g, aws, azure, vault };
}

/** A reference, and an integration (default provider `@slug` in the default workspace) whose key is read from it. */
async function providerFromReference(
  g: GatewayHarness,
  slug: string,
  reference: Record<string, unknown>,
  mappings: Array<Record<string, unknown>> = [{ target_field: 'key', secret_reference_id: slug }],
) {
  const ref = await g.admin.post('/v1/secret-references', { name: slug, slug, ...reference });
  expect(ref.status, JSON.stringify(ref.body)).toBe(200);
  const integration = await g.admin.post('/v1/integrations', {
    name: slug,
    slug,
    ai_provider_id: 'openai',
    configurations: { custom_host: g.mock.baseUrl },
    secret_mappings: mappings,
  });
  expect(integration.status, JSON.stringify(integration.body)).toBe(200);
  return ref.body.id as string;
}

/** A chat completion through the gateway with the official OpenAI client and `@slug`. */
async function chatThrough(g: GatewayHarness, slug: string) {
  const completion = await g
    .openai({ 'x-service-provider': `@${slug}` })
    .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] });
  expect(completion.choices[0]!.message.content).toBeTruthy();
  return completion;
}

/** The provider key each upstream request carried. */
const upstreamKeys = (g: GatewayHarness) => g.mock.requests.map((r) => r.headers.authorization);

describe('AWS Secrets Manager', () => {
  it('access key: signs with SigV4 (checked by the double), hands the key to the provider, and reads once per TTL', async () => {
    const { g, aws } = await setup();
    const reader = aws.addAccessKey('user/svcgw-reader');
    aws.putSecret('prod/openai', JSON.stringify({ api_key: PROVIDER_KEY, org: 'org-1' }));
    await providerFromReference(g, 'aws-openai', {
      manager_type: 'aws_sm',
      auth_config: {
        aws_auth_type: 'accessKey',
        aws_access_key_id: reader.accessKeyId,
        aws_secret_access_key: reader.secretAccessKey,
        aws_region: 'eu-west-1',
        aws_secrets_manager_endpoint: aws.url,
      },
      secret_path: 'prod/openai',
      secret_key: 'api_key',
    });

    await chatThrough(g, 'aws-openai');
    await chatThrough(g, 'aws-openai');
    expect(upstreamKeys(g)).toEqual([`Bearer ${PROVIDER_KEY}`, `Bearer ${PROVIDER_KEY}`]);
    // One read for both requests, signed by the reference's own key for its region.
    expect(aws.calls).toEqual([
      expect.objectContaining({
        service: 'secretsmanager',
        action: 'GetSecretValue',
        accessKeyId: reader.accessKeyId,
        region: 'eu-west-1',
        status: 200,
        body: { SecretId: 'prod/openai' },
      }),
    ]);

    // A wrong secret access key: the double recomputes the signature and refuses it.
    await providerFromReference(g, 'aws-wrong', {
      manager_type: 'aws_sm',
      auth_config: {
        aws_auth_type: 'accessKey',
        aws_access_key_id: reader.accessKeyId,
        aws_secret_access_key: 'not-the-secret-access-key-0000000000000',
        aws_region: 'eu-west-1',
        aws_secrets_manager_endpoint: aws.url,
      },
      secret_path: 'prod/openai',
      secret_key: 'api_key',
    });
    const refused = await g.admin.post('/v1/chat/completions', chat, { 'x-service-provider': '@aws-wrong' });
    expectRefused(refused, 502, 'SECRET_MANAGER_ERROR', 'x-service-provider');
    expect(refused.body.error.message).toContain('secret reference aws-wrong');
    expect(refused.body.error.message).toContain('InvalidSignatureException');
    expect(aws.calls.at(-1)).toMatchObject({ service: 'secretsmanager', status: 403, accessKeyId: reader.accessKeyId });
    expect(g.mock.requests).toHaveLength(2);
  });

  it('assumed role: the server’s own credentials call STS AssumeRole with the external id, the role’s temporary credentials read the secret', async () => {
    const { g, aws } = await setup();
    const server = aws.addAccessKey('svcgw-host');
    vi.stubEnv('AWS_ACCESS_KEY_ID', server.accessKeyId);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', server.secretAccessKey);
    const role = 'arn:aws:iam::210987654321:role/svcgw-secret-reader';
    aws.addRole(role, ['svcgw-host'], 'ext-7f3a');
    aws.putSecret('openai/key', PROVIDER_KEY);
    await providerFromReference(g, 'aws-role', {
      manager_type: 'aws_sm',
      auth_config: {
        aws_auth_type: 'assumedRole',
        aws_role_arn: role,
        aws_external_id: 'ext-7f3a',
        aws_region: 'us-east-1',
        aws_secrets_manager_endpoint: aws.url,
        aws_sts_endpoint: aws.url,
      },
      secret_path: 'openai/key',
    });
    await chatThrough(g, 'aws-role');
    expect(upstreamKeys(g)).toEqual([`Bearer ${PROVIDER_KEY}`]);
    expect(aws.calls.map((c) => [c.service, c.action, c.identity, c.status])).toEqual([
      ['sts', 'AssumeRole', 'svcgw-host', 200],
      ['secretsmanager', 'GetSecretValue', `${role}/svcgw-secret-reference`, 200],
    ]);
    expect(aws.calls[0]!.body).toMatchObject({ RoleArn: role, ExternalId: 'ext-7f3a' });
    expect(aws.calls[1]!.accessKeyId).toMatch(/^ASIA/);

    // Without the external id the role's trust policy refuses.
    await providerFromReference(g, 'aws-role-no-ext', {
      manager_type: 'aws_sm',
      auth_config: {
        aws_auth_type: 'assumedRole',
        aws_role_arn: role,
        aws_region: 'us-east-1',
        aws_secrets_manager_endpoint: aws.url,
        aws_sts_endpoint: aws.url,
      },
      secret_path: 'openai/key',
    });
    const refused = await g.admin.post('/v1/chat/completions', chat, { 'x-service-provider': '@aws-role-no-ext' });
    expectRefused(refused, 502, 'SECRET_MANAGER_ERROR');
    expect(refused.body.error.message).toContain('not authorized to perform: sts:AssumeRole');
  });

  it('service role: the default credential chain finds the task role (container credentials endpoint)', async () => {
    const { g, aws } = await setup();
    vi.stubEnv('AWS_CONTAINER_CREDENTIALS_FULL_URI', `${aws.url}/container-credentials`);
    vi.stubEnv('AWS_CONTAINER_AUTHORIZATION_TOKEN', 'ecs-agent-token-123');
    aws.serveContainerCredentials('ecs-agent-token-123', 'svcgw-task-role');
    aws.putSecret('openai/key', PROVIDER_KEY);
    await providerFromReference(g, 'aws-task', {
      manager_type: 'aws_sm',
      auth_config: { aws_auth_type: 'serviceRole', aws_region: 'us-east-1', aws_secrets_manager_endpoint: aws.url },
      secret_path: 'openai/key',
    });
    await chatThrough(g, 'aws-task');
    expect(upstreamKeys(g)).toEqual([`Bearer ${PROVIDER_KEY}`]);
    expect(aws.calls.map((c) => [c.service, c.identity, c.status])).toEqual([
      ['container-credentials', null, 200],
      ['secretsmanager', 'svcgw-task-role', 200],
    ]);
  });
});

describe('Azure Key Vault', () => {
  it('directory identity: the Key Vault challenge, then a client-credentials token from Entra for the vault’s resource', async () => {
    const { g, azure } = await setup();
    azure.addApp('0f4c-app', 'app-client-secret-value');
    azure.setSecret('openai-key', PROVIDER_KEY);
    await providerFromReference(g, 'azure-app', {
      manager_type: 'azure_kv',
      auth_config: {
        azure_auth_mode: 'entra',
        azure_entra_tenant_id: TENANT,
        azure_entra_client_id: '0f4c-app',
        azure_entra_client_secret: 'app-client-secret-value',
        azure_vault_url: azure.url,
        azure_authority_host: azure.url,
      },
      secret_path: 'openai-key',
    });
    await chatThrough(g, 'azure-app');
    expect(upstreamKeys(g)).toEqual([`Bearer ${PROVIDER_KEY}`]);
    expect(azure.calls.map((c) => [c.kind, c.status, c.bearer])).toEqual([
      ['get-secret', 401, false],
      ['openid-configuration', 200, false],
      ['token', 200, false],
      ['get-secret', 200, true],
    ]);
    expect(azure.calls[2]!.detail).toMatchObject({
      tenant: TENANT,
      client_id: '0f4c-app',
      scope: `${KEY_VAULT_RESOURCE}/.default`,
      grant_type: 'client_credentials',
    });
    expect(azure.calls[3]!.identity).toBe('app:0f4c-app');

    await providerFromReference(g, 'azure-bad-secret', {
      manager_type: 'azure_kv',
      auth_config: {
        azure_auth_mode: 'entra',
        azure_entra_tenant_id: TENANT,
        azure_entra_client_id: '0f4c-app',
        azure_entra_client_secret: 'wrong-secret',
        azure_vault_url: azure.url,
        azure_authority_host: azure.url,
      },
      secret_path: 'openai-key',
    });
    const refused = await g.admin.post('/v1/chat/completions', chat, { 'x-service-provider': '@azure-bad-secret' });
    expectRefused(refused, 502, 'SECRET_MANAGER_ERROR');
    expect(refused.body.error.message).toContain('AADSTS7000215');
    expect(refused.body.error.message).not.toContain('wrong-secret');
  });

  it('managed identity (the App Service endpoint) and the default credential (the environment’s app)', async () => {
    const { g, azure } = await setup();
    azure.setSecret('openai-key', PROVIDER_KEY);
    vi.stubEnv('IDENTITY_ENDPOINT', `${azure.url}/msi/token`);
    vi.stubEnv('IDENTITY_HEADER', 'app-service-header-1');
    azure.addManagedIdentity('5d1e-user-assigned', 'app-service-header-1');
    await providerFromReference(g, 'azure-managed', {
      manager_type: 'azure_kv',
      auth_config: {
        azure_auth_mode: 'managed',
        azure_managed_client_id: '5d1e-user-assigned',
        azure_vault_url: azure.url,
      },
      secret_path: 'openai-key',
    });
    await chatThrough(g, 'azure-managed');
    expect(azure.calls.filter((c) => c.status === 200).map((c) => [c.kind, c.identity])).toEqual([
      ['managed-identity', 'managed:5d1e-user-assigned'],
      ['get-secret', 'managed:5d1e-user-assigned'],
    ]);
    expect(azure.calls.find((c) => c.kind === 'managed-identity')!.detail.resource).toBe(KEY_VAULT_RESOURCE);

    vi.unstubAllEnvs();
    vi.stubEnv('AZURE_TENANT_ID', TENANT);
    vi.stubEnv('AZURE_CLIENT_ID', 'env-app');
    vi.stubEnv('AZURE_CLIENT_SECRET', 'env-app-secret');
    vi.stubEnv('AZURE_AUTHORITY_HOST', azure.url);
    azure.addApp('env-app', 'env-app-secret');
    await providerFromReference(g, 'azure-default', {
      manager_type: 'azure_kv',
      auth_config: { azure_auth_mode: 'default', azure_vault_url: azure.url },
      secret_path: 'openai-key',
    });
    await chatThrough(g, 'azure-default');
    expect(azure.calls.at(-1)).toMatchObject({ kind: 'get-secret', status: 200, identity: 'app:env-app' });
    expect(upstreamKeys(g)).toEqual([`Bearer ${PROVIDER_KEY}`, `Bearer ${PROVIDER_KEY}`]);
  });
});

describe('HashiCorp Vault', () => {
  it('token (with a namespace), AppRole and Kubernetes logins read KV v2; a revoked login token means one new login', async () => {
    const { g, vault } = await setup();
    vault.put('secret/openai', { api_key: PROVIDER_KEY, note: 'prod' });
    const token = vault.addToken('ops-token', 'team-ml');
    await providerFromReference(g, 'vault-token', {
      manager_type: 'hashicorp_vault',
      auth_config: { vault_auth_type: 'token', vault_addr: vault.url, vault_token: token, vault_namespace: 'team-ml' },
      secret_path: 'secret/openai',
      secret_key: 'api_key',
    });
    vault.addAppRole('role-7a1', 'secret-id-9c2');
    await providerFromReference(g, 'vault-approle', {
      manager_type: 'hashicorp_vault',
      auth_config: {
        vault_auth_type: 'approle',
        vault_addr: vault.url,
        vault_role_id: 'role-7a1',
        vault_secret_id: 'secret-id-9c2',
      },
      secret_path: 'secret/openai',
      secret_key: 'api_key',
    });
    vault.addKubernetesRole('svcgw-gateway', K8S_JWT);
    await providerFromReference(g, 'vault-k8s', {
      manager_type: 'hashicorp_vault',
      auth_config: { vault_auth_type: 'kubernetes', vault_addr: vault.url, vault_role: 'svcgw-gateway' },
      // The KV v2 API form of the same path works too.
      secret_path: 'secret/data/openai',
      secret_key: 'api_key',
    });
    for (const slug of ['vault-token', 'vault-approle', 'vault-k8s']) await chatThrough(g, slug);
    expect(upstreamKeys(g)).toEqual(Array(3).fill(`Bearer ${PROVIDER_KEY}`));
    expect(vault.calls.map((c) => [c.method, c.path, c.status, c.token, c.namespace])).toEqual([
      ['GET', '/v1/secret/data/openai', 200, 'ops-token', 'team-ml'],
      ['POST', '/v1/auth/approle/login', 200, null, null],
      ['GET', '/v1/secret/data/openai', 200, 'approle:role-7a1', null],
      ['POST', '/v1/auth/kubernetes/login', 200, null, null],
      ['GET', '/v1/secret/data/openai', 200, 'kubernetes:svcgw-gateway', null],
    ]);

    // The login tokens are revoked; a change of the secret makes the gateway read again (new reference version).
    vault.revokeLoginTokens();
    vault.put('secret/openai', { api_key: PROVIDER_KEY, note: 'rotated' });
    await g.admin.put('/v1/secret-references/vault-approle', { description: 'read again' });
    const before = vault.calls.length;
    await chatThrough(g, 'vault-approle');
    expect(vault.calls.slice(before).map((c) => [c.path, c.status])).toEqual([
      ['/v1/auth/approle/login', 200],
      ['/v1/secret/data/openai', 200],
    ]);

    // A secret without the key named, and a secret of several keys with none named, are clear errors.
    await providerFromReference(
      g,
      'vault-no-key',
      {
        manager_type: 'hashicorp_vault',
        auth_config: { vault_auth_type: 'token', vault_addr: vault.url, vault_token: vault.addToken('t2') },
        secret_path: 'secret/openai',
      },
      [{ target_field: 'key', secret_reference_id: 'vault-no-key', secret_key: 'missing_key' }],
    );
    const missing = await g.admin.post('/v1/chat/completions', chat, { 'x-service-provider': '@vault-no-key' });
    expectRefused(missing, 502, 'SECRET_MANAGER_ERROR');
    expect(missing.body.error.message).toContain('has no key missing_key (it has: api_key, note)');
    expect(missing.body.error.message).not.toContain(PROVIDER_KEY);
  });

  it('maps provider settings too: a custom host as text and custom headers as JSON, on a virtual key', async () => {
    const { g, vault } = await setup();
    vault.put('secret/gateway', {
      key: PROVIDER_KEY,
      host: g.mock.baseUrl,
      headers: JSON.stringify({ 'x-team': 'ml' }),
    });
    const token = vault.addToken('ops');
    const ref = await g.admin.post('/v1/secret-references', {
      name: 'gateway settings',
      manager_type: 'hashicorp_vault',
      auth_config: { vault_auth_type: 'token', vault_addr: vault.url, vault_token: token },
      secret_path: 'secret/gateway',
    });
    const vk = await g.admin.post('/v1/virtual-keys', {
      name: 'from vault',
      slug: 'vk-vault',
      provider: 'openai',
      configurations: { custom_host: 'https://replaced.example.com/v1' },
      secret_mappings: [
        { target_field: 'key', secret_reference_id: ref.body.id, secret_key: 'key' },
        { target_field: 'configurations.custom_host', secret_reference_id: ref.body.id, secret_key: 'host' },
        {
          target_field: 'configurations.custom_headers',
          secret_reference_id: ref.body.id,
          secret_key: 'headers',
          value_format: 'json',
        },
      ],
    });
    expect(vk.status, JSON.stringify(vk.body)).toBe(200);
    // The provider is reached at the host read from the vault (the stored one does not resolve), with the key from there.
    const res = await g.admin.post('/v1/chat/completions', chat, { 'x-service-virtual-key': 'vk-vault' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(g.mock.requests[0]!.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
    // value_format json: the setting is the parsed object.
    const verified = await g.server.keys.verify(g.adminKey);
    if (!verified.ok) throw new Error('admin key');
    const resolved = await g.server.credentials.resolveVirtualKey(
      verified.principal,
      g.server.bootstrap.workspaceId,
      'vk-vault',
    );
    expect(resolved.configurations).toMatchObject({ custom_host: g.mock.baseUrl, custom_headers: { 'x-team': 'ml' } });
    expect(resolved.fromSecretManager).toBe(true);
    // One read of the secret serves all three fields.
    expect(vault.calls.filter((c) => c.path === '/v1/secret/data/gateway')).toHaveLength(1);
  });
});

describe('keys rotated in the secret manager', () => {
  it('are picked up when the provider answers 401 (one retry), and in any case once the cache TTL has passed', async () => {
    const clock = createManualClock();
    const { g, vault } = await setup({ clock });
    vault.put('secret/openai', { api_key: PROVIDER_KEY });
    await providerFromReference(g, 'vault-openai', {
      manager_type: 'hashicorp_vault',
      auth_config: { vault_auth_type: 'token', vault_addr: vault.url, vault_token: vault.addToken('ops') },
      secret_path: 'secret/openai',
      secret_key: 'api_key',
    });
    const reads = () => vault.calls.filter((c) => c.path === '/v1/secret/data/openai').length;
    await chatThrough(g, 'vault-openai');
    expect(reads()).toBe(1);

    // The key is rotated at the provider and in the vault; the gateway still holds the old one.
    const rotated = 'sk-proj-ROTATED-IN-THE-VAULT-fedcba9876543210';
    vault.put('secret/openai', { api_key: rotated });
    g.mock.acceptApiKey(rotated);
    clock.advance(15_000);
    await chatThrough(g, 'vault-openai');
    expect(upstreamKeys(g)).toEqual([`Bearer ${PROVIDER_KEY}`, `Bearer ${PROVIDER_KEY}`, `Bearer ${rotated}`]);
    expect(reads()).toBe(2);
    // The refreshed value is what later requests use, without reading again.
    await chatThrough(g, 'vault-openai');
    expect(upstreamKeys(g).at(-1)).toBe(`Bearer ${rotated}`);
    expect(reads()).toBe(2);

    // A 401 the vault cannot fix (same key there) reaches the client as the provider's 401, after one read at most.
    g.mock.acceptApiKey('sk-proj-SOMETHING-ELSE-0000000000000000');
    clock.advance(15_000);
    const refused = await g.admin.post('/v1/chat/completions', chat, { 'x-service-provider': '@vault-openai' });
    expect(refused.status).toBe(401);
    expect(reads()).toBe(3);
    // Within the refresh floor (10 s) a second refusal does not read the vault again.
    expect((await g.admin.post('/v1/chat/completions', chat, { 'x-service-provider': '@vault-openai' })).status).toBe(
      401,
    );
    expect(reads()).toBe(3);

    // Without any 401, a value is read again once secret_cache_ttl_ms (5 minutes) has passed.
    g.mock.acceptApiKey(rotated);
    await chatThrough(g, 'vault-openai');
    expect(reads()).toBe(3);
    clock.advance(300_000);
    await chatThrough(g, 'vault-openai');
    expect(reads()).toBe(4);
  });

  it('answers 502 naming the reference when the secret manager is down, and recovers when it is back', async () => {
    const { g, aws } = await setup();
    const reader = aws.addAccessKey('reader');
    aws.putSecret('openai', PROVIDER_KEY);
    await providerFromReference(g, 'aws-down', {
      manager_type: 'aws_sm',
      auth_config: {
        aws_auth_type: 'accessKey',
        aws_access_key_id: reader.accessKeyId,
        aws_secret_access_key: reader.secretAccessKey,
        aws_region: 'us-east-1',
        aws_secrets_manager_endpoint: 'http://127.0.0.1:9',
      },
      secret_path: 'openai',
    });
    const down = await g.admin.post('/v1/chat/completions', chat, { 'x-service-provider': '@aws-down' });
    expectRefused(down, 502, 'SECRET_MANAGER_ERROR', 'x-service-provider');
    expect(down.body.error.message).toContain('secret reference aws-down');
    expect(g.mock.requests).toHaveLength(0);
    const failed = g.logLines.find((line) => line.includes('a secret reference could not be read'));
    expect(failed).toContain('"secret_reference":"aws-down"');

    const ref = await g.admin.get('/v1/secret-references/aws-down');
    await g.admin.put('/v1/secret-references/aws-down', {
      auth_config: { ...ref.body.auth_config, aws_secrets_manager_endpoint: aws.url },
    });
    await chatThrough(g, 'aws-down');
    expect(upstreamKeys(g)).toEqual([`Bearer ${PROVIDER_KEY}`]);
    expect(g.logLines.join('\n')).not.toContain(PROVIDER_KEY);
    expect(g.logLines.join('\n')).not.toContain(reader.secretAccessKey);
  });
});
