import { afterEach, expect, it, vi } from 'vitest';
import { createSecretManagers } from '../../../src/secrets/secret-managers.js';
import { startMockAws } from '../../helpers/mock-aws-secrets-manager.js';

const network = {
  extraCa: null,
  timeoutMs: 5000,
  ambientCredentials: true,
  azureChallengeVerification: true,
  kubernetesTokenPath: '/nonexistent',
  now: Date.now,
};
afterEach(() => vi.unstubAllEnvs());

it('aws access key, assumed role, service role', async () => {
  const aws = await startMockAws();
  const key = aws.addAccessKey('user/alice');
  aws.putSecret('openai', JSON.stringify({ api_key: 'sk-aaa' }));
  const managers = createSecretManagers(network);
  const target = (auth: any) => ({
    referenceId: 'r' + Math.random(),
    slug: 's',
    version: '1',
    managerType: 'aws_sm' as const,
    auth,
    secretPath: 'openai',
  });
  expect(
    await managers.read(
      target({
        aws_auth_type: 'accessKey',
        aws_access_key_id: key.accessKeyId,
        aws_secret_access_key: key.secretAccessKey,
        aws_region: 'us-east-1',
        aws_secrets_manager_endpoint: aws.url,
      }),
    ),
  ).toContain('sk-aaa');
  await expect(
    managers.read(
      target({
        aws_auth_type: 'accessKey',
        aws_access_key_id: key.accessKeyId,
        aws_secret_access_key: 'wrong',
        aws_region: 'us-east-1',
        aws_secrets_manager_endpoint: aws.url,
      }),
    ),
  ).rejects.toThrow(/signature/);
  await managers.write(
    target({
      aws_auth_type: 'accessKey',
      aws_access_key_id: key.accessKeyId,
      aws_secret_access_key: key.secretAccessKey,
      aws_region: 'us-east-1',
      aws_secrets_manager_endpoint: aws.url,
    }),
    'api_key',
    'sk-bbb',
  );
  expect(aws.secret('openai')).toBe(JSON.stringify({ api_key: 'sk-bbb' }));

  const server = aws.addAccessKey('server');
  vi.stubEnv('AWS_ACCESS_KEY_ID', server.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', server.secretAccessKey);
  aws.addRole('arn:aws:iam::123456789012:role/reader', ['server'], 'ext-1');
  expect(
    await managers.read(
      target({
        aws_auth_type: 'assumedRole',
        aws_role_arn: 'arn:aws:iam::123456789012:role/reader',
        aws_external_id: 'ext-1',
        aws_region: 'us-east-1',
        aws_secrets_manager_endpoint: aws.url,
        aws_sts_endpoint: aws.url,
      }),
    ),
  ).toContain('sk-bbb');
  console.log(aws.calls);
  vi.unstubAllEnvs();
  vi.stubEnv('AWS_ACCESS_KEY_ID', '');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', '');
  vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', '/nonexistent/creds');
  vi.stubEnv('AWS_CONFIG_FILE', '/nonexistent/config');
  vi.stubEnv('AWS_CONTAINER_CREDENTIALS_FULL_URI', `${aws.url}/container-credentials`);
  vi.stubEnv('AWS_CONTAINER_AUTHORIZATION_TOKEN', 'tok-123');
  aws.serveContainerCredentials('tok-123');
  expect(
    await managers.read(
      target({ aws_auth_type: 'serviceRole', aws_region: 'us-east-1', aws_secrets_manager_endpoint: aws.url }),
    ),
  ).toContain('sk-bbb');
  console.log(aws.calls.slice(-2));
  await aws.close();
});
