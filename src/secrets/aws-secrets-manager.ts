import { Agent } from 'node:https';
import {
  GetSecretValueCommand,
  PutSecretValueCommand,
  SecretsManagerClient,
  SecretsManagerServiceException,
} from '@aws-sdk/client-secrets-manager';
import { fromNodeProviderChain, fromTemporaryCredentials } from '@aws-sdk/credential-providers';
import type { AwsAuth } from './auth-config.js';
import {
  SecretManagerError,
  type SecretBackend,
  type SecretNetwork,
  type SecretTarget,
  type SecretValue,
} from './types.js';
import { trustedCa, VersionedCache } from './clients.js';

/** The session name CloudTrail shows for reads made under an assumed role. */
const ROLE_SESSION_NAME = 'svcgw-secret-reference';

/**
 * AWS Secrets Manager through the AWS SDK v3: SigV4 signing, STS AssumeRole and the default
 * credential chain are the SDK's. One client per reference version, so that its credentials
 * (an assumed role's temporary ones included) are cached and refreshed by the SDK.
 */
export function createAwsSecretsManager(network: SecretNetwork): SecretBackend {
  const clients = new VersionedCache<SecretsManagerClient>((client) => client.destroy());
  const httpsAgent = network.extraCa ? new Agent({ keepAlive: true, ca: trustedCa(network.extraCa) }) : undefined;
  const requestHandler = { requestTimeout: network.timeoutMs, connectionTimeout: network.timeoutMs, httpsAgent };

  function clientFor(target: SecretTarget): SecretsManagerClient {
    return clients.get(target, () => {
      const auth = target.auth as AwsAuth;
      const region = auth.aws_region;
      return new SecretsManagerClient({
        ...(region ? { region } : {}),
        ...(auth.aws_secrets_manager_endpoint ? { endpoint: auth.aws_secrets_manager_endpoint } : {}),
        credentials: credentialsOf(auth, requestHandler),
        requestHandler,
        maxAttempts: 2,
      });
    });
  }

  return {
    async read(target) {
      try {
        const answer = await clientFor(target).send(new GetSecretValueCommand({ SecretId: target.secretPath }));
        if (answer.SecretString !== undefined) return answer.SecretString;
        if (answer.SecretBinary !== undefined) return Buffer.from(answer.SecretBinary).toString('utf8');
        throw new SecretManagerError('not_found', `Secret ${target.secretPath} has no value.`);
      } catch (error) {
        throw failure(error, target, 'read');
      }
    },

    async write(target, value: SecretValue) {
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      try {
        await clientFor(target).send(new PutSecretValueCommand({ SecretId: target.secretPath, SecretString: text }));
      } catch (error) {
        throw failure(error, target, 'write');
      }
    },
  };
}

function credentialsOf(auth: AwsAuth, requestHandler: object) {
  switch (auth.aws_auth_type) {
    case 'accessKey':
      return { accessKeyId: auth.aws_access_key_id, secretAccessKey: auth.aws_secret_access_key };
    case 'assumedRole':
      // The server's own credentials (the default chain) sign the AssumeRole call.
      return fromTemporaryCredentials({
        params: {
          RoleArn: auth.aws_role_arn,
          RoleSessionName: ROLE_SESSION_NAME,
          ...(auth.aws_external_id ? { ExternalId: auth.aws_external_id } : {}),
        },
        clientConfig: {
          region: auth.aws_region,
          ...(auth.aws_sts_endpoint ? { endpoint: auth.aws_sts_endpoint } : {}),
          requestHandler,
        },
      });
    case 'serviceRole':
      return fromNodeProviderChain();
  }
}

function failure(error: unknown, target: SecretTarget, verb: 'read' | 'write'): SecretManagerError {
  if (error instanceof SecretManagerError) return error;
  const what = `AWS Secrets Manager could not ${verb} ${target.secretPath}`;
  if (error instanceof SecretsManagerServiceException) {
    const kind =
      error.name === 'ResourceNotFoundException'
        ? 'not_found'
        : error.$metadata.httpStatusCode === 400 && /Access|Signature|Token|Credential/i.test(error.name)
          ? 'denied'
          : error.name === 'AccessDeniedException'
            ? 'denied'
            : 'failed';
    return new SecretManagerError(kind, `${what}: ${error.name}: ${error.message}`, { cause: error });
  }
  const err = error as { name?: string; message?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const network = /ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EAI_AGAIN|TimeoutError/.test(
    `${err.code ?? ''} ${err.name ?? ''}`,
  );
  return new SecretManagerError(
    network ? 'unreachable' : err.$metadata?.httpStatusCode === 403 ? 'denied' : 'failed',
    `${what}: ${err.name ?? 'Error'}: ${err.message ?? String(error)}`,
    { cause: error },
  );
}
