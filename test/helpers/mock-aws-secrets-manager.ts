import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import { listenOnLoopback } from './loopback-server.js';

/** AWS credentials as the mock knows them: long-term (AKIA…) or temporary (ASIA… with a session token). */
export interface AwsIdentity {
  secretAccessKey: string;
  sessionToken?: string;
  /** What the mock reports as the caller, for assertions. */
  label: string;
}

/** One call the mock accepted or refused, for tests to check who called and how. */
export interface AwsCall {
  service: 'secretsmanager' | 'sts' | 'container-credentials';
  action: string;
  /** The access key id that signed the call (null for the container credentials endpoint). */
  accessKeyId: string | null;
  identity: string | null;
  region: string | null;
  status: number;
  body: Record<string, string>;
}

/** `crypto.createHash`/`createHmac` in the shape SignatureV4 takes (`@smithy/types` Checksum). */
class NodeSha256 {
  readonly #hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.#hash.digest()));
  }
  reset(): void {}
}

function bytes(data: string | ArrayBuffer | ArrayBufferView): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

const AUTH_RE =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/;

/**
 * A stand-in for AWS on 127.0.0.1 that speaks the wire formats the AWS SDK v3 uses and checks
 * what it receives: Secrets Manager (JSON 1.1 protocol: `POST /` with `X-Amz-Target:
 * secretsmanager.GetSecretValue` / `PutSecretValue`), STS AssumeRole (Query protocol, XML
 * answer) and the container credentials endpoint (an ECS task role). Every request's SigV4
 * signature is recomputed with `@smithy/signature-v4` from the secret of the access key it
 * names, and refused as AWS refuses it when it does not match.
 */
export async function startMockAws(options: { region?: string } = {}) {
  const region = options.region ?? 'us-east-1';
  const identities = new Map<string, AwsIdentity>();
  const secrets = new Map<string, { value: string; versions: number }>();
  /** Role ARN → the external id AssumeRole must carry (null: none) and who may assume it. */
  const roles = new Map<string, { externalId: string | null; trusted: string[] }>();
  const containerCredentials: { token: string | null; identity: string | null } = { token: null, identity: null };
  const calls: AwsCall[] = [];

  function newTemporary(label: string) {
    const accessKeyId = `ASIA${randomBytes(8).toString('hex').toUpperCase()}`;
    const identity: AwsIdentity = {
      secretAccessKey: randomBytes(20).toString('base64'),
      sessionToken: randomBytes(48).toString('base64'),
      label,
    };
    identities.set(accessKeyId, identity);
    return { accessKeyId, ...identity };
  }

  /** The identity whose signature this is, or a refusal in AWS's words. */
  async function verify(
    req: IncomingMessage,
    body: string,
    service: string,
  ): Promise<
    | { ok: true; accessKeyId: string; identity: AwsIdentity; region: string }
    | { ok: false; status: number; type: string; message: string; accessKeyId?: string }
  > {
    const match = AUTH_RE.exec(String(req.headers.authorization ?? ''));
    if (!match)
      return { ok: false, status: 400, type: 'MissingAuthenticationToken', message: 'Missing Authentication Token' };
    const [, accessKeyId, , signedRegion, signedService, signedHeaders, signature] = match as unknown as string[];
    const identity = identities.get(accessKeyId!);
    if (!identity)
      return {
        ok: false,
        status: 400,
        type: 'UnrecognizedClientException',
        message: 'The security token included in the request is invalid.',
      };
    if (signedService !== service)
      return {
        ok: false,
        status: 400,
        type: 'InvalidSignatureException',
        message: `Credential should be scoped to correct service: '${service}'.`,
      };
    if (identity.sessionToken !== undefined && req.headers['x-amz-security-token'] !== identity.sessionToken)
      return {
        ok: false,
        status: 400,
        type: 'UnrecognizedClientException',
        message: 'The security token included in the request is invalid.',
      };
    const amzDate = String(req.headers['x-amz-date'] ?? '');
    const signingDate = new Date(
      `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
    );
    const headers: Record<string, string> = {};
    for (const name of signedHeaders!.split(';')) {
      const value = req.headers[name];
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
    }
    const [host, port] = String(req.headers.host).split(':');
    const signer = new SignatureV4({
      credentials: {
        accessKeyId: accessKeyId!,
        secretAccessKey: identity.secretAccessKey,
        ...(identity.sessionToken !== undefined ? { sessionToken: identity.sessionToken } : {}),
      },
      region: signedRegion!,
      service,
      sha256: NodeSha256,
    });
    const [path = '/', query] = (req.url ?? '/').split('?');
    const signed = await signer.sign(
      {
        method: req.method ?? 'POST',
        protocol: 'http:',
        hostname: host!,
        ...(port ? { port: Number(port) } : {}),
        path,
        query: Object.fromEntries(new URLSearchParams(query ?? '')),
        headers,
        body,
      },
      { signingDate },
    );
    const expected = AUTH_RE.exec(String(signed.headers.authorization))?.[6];
    if (expected !== signature)
      return {
        ok: false,
        accessKeyId: accessKeyId!,
        status: 403,
        type: 'InvalidSignatureException',
        message:
          'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.',
      };
    return { ok: true, accessKeyId: accessKeyId!, identity, region: signedRegion! };
  }

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': randomUUID() });
    res.end(JSON.stringify(body));
  };
  const xml = (res: ServerResponse, status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'text/xml', 'x-amzn-requestid': randomUUID() });
    res.end(body);
  };
  const stsError = (type: string, message: string) =>
    `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${type}</Code><Message>${message}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`;

  async function secretsManager(req: IncomingMessage, res: ServerResponse, body: string) {
    const action = String(req.headers['x-amz-target'] ?? '').replace(/^secretsmanager\./, '');
    const checked = await verify(req, body, 'secretsmanager');
    const input = body ? (JSON.parse(body) as Record<string, string>) : {};
    const record = (status: number, signer?: { accessKeyId: string; identity: AwsIdentity; region: string }) =>
      calls.push({
        service: 'secretsmanager',
        action,
        accessKeyId: signer?.accessKeyId ?? null,
        identity: signer?.identity.label ?? null,
        region: signer?.region ?? null,
        status,
        body: { SecretId: input.SecretId ?? '' },
      });
    if (!checked.ok) {
      calls.push({
        service: 'secretsmanager',
        action,
        accessKeyId: checked.accessKeyId ?? null,
        identity: null,
        region: null,
        status: checked.status,
        body: { SecretId: input.SecretId ?? '' },
      });
      return json(res, checked.status, { __type: checked.type, message: checked.message });
    }
    const arn = (name: string) => `arn:aws:secretsmanager:${region}:123456789012:secret:${name}-AbCdEf`;
    const stored = secrets.get(input.SecretId ?? '');
    if (!stored) {
      record(400, checked);
      return json(res, 400, {
        __type: 'ResourceNotFoundException',
        message: "Secrets Manager can't find the specified secret.",
      });
    }
    if (action === 'GetSecretValue') {
      record(200, checked);
      return json(res, 200, {
        ARN: arn(input.SecretId!),
        Name: input.SecretId,
        VersionId: `v${stored.versions}`,
        SecretString: stored.value,
        VersionStages: ['AWSCURRENT'],
        CreatedDate: 1767225600,
      });
    }
    if (action === 'PutSecretValue') {
      if (typeof input.SecretString !== 'string') {
        record(400, checked);
        return json(res, 400, { __type: 'InvalidParameterException', message: 'SecretString is required.' });
      }
      stored.value = input.SecretString;
      stored.versions += 1;
      record(200, checked);
      return json(res, 200, {
        ARN: arn(input.SecretId!),
        Name: input.SecretId,
        VersionId: `v${stored.versions}`,
        VersionStages: ['AWSCURRENT'],
      });
    }
    record(400, checked);
    return json(res, 400, { __type: 'UnknownOperationException', message: `Unknown operation ${action}` });
  }

  async function sts(req: IncomingMessage, res: ServerResponse, body: string) {
    const form = Object.fromEntries(new URLSearchParams(body));
    const checked = await verify(req, body, 'sts');
    const record = (status: number) =>
      calls.push({
        service: 'sts',
        action: form.Action ?? '',
        accessKeyId: checked.ok ? checked.accessKeyId : null,
        identity: checked.ok ? checked.identity.label : null,
        region: checked.ok ? checked.region : null,
        status,
        body: form,
      });
    if (!checked.ok) {
      record(checked.status);
      return xml(res, checked.status, stsError(checked.type, checked.message));
    }
    const role = roles.get(form.RoleArn ?? '');
    if (
      form.Action !== 'AssumeRole' ||
      !role ||
      !role.trusted.includes(checked.identity.label) ||
      (role.externalId ?? undefined) !== form.ExternalId
    ) {
      record(403);
      return xml(
        res,
        403,
        stsError(
          'AccessDenied',
          `User: ${checked.identity.label} is not authorized to perform: sts:AssumeRole on resource: ${form.RoleArn}`,
        ),
      );
    }
    const temporary = newTemporary(`${form.RoleArn}/${form.RoleSessionName}`);
    record(200);
    return xml(
      res,
      200,
      `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><AssumedRoleUser><AssumedRoleId>AROA0000000000000000:${form.RoleSessionName}</AssumedRoleId><Arn>${form.RoleArn}/${form.RoleSessionName}</Arn></AssumedRoleUser><Credentials><AccessKeyId>${temporary.accessKeyId}</AccessKeyId><SecretAccessKey>${temporary.secretAccessKey}</SecretAccessKey><SessionToken>${temporary.sessionToken}</SessionToken><Expiration>${new Date(Date.now() + 3_600_000).toISOString()}</Expiration></Credentials></AssumeRoleResult><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></AssumeRoleResponse>`,
    );
  }

  /** What ECS serves at AWS_CONTAINER_CREDENTIALS_FULL_URI: the task role's temporary credentials. */
  function container(req: IncomingMessage, res: ServerResponse) {
    const ok = containerCredentials.token !== null && req.headers.authorization === containerCredentials.token;
    calls.push({
      service: 'container-credentials',
      action: 'GetCredentials',
      accessKeyId: null,
      identity: null,
      region: null,
      status: ok ? 200 : 401,
      body: {},
    });
    if (!ok) return json(res, 401, { message: 'unauthorized' });
    const temporary = newTemporary(containerCredentials.identity ?? 'task-role');
    return json(res, 200, {
      AccessKeyId: temporary.accessKeyId,
      SecretAccessKey: temporary.secretAccessKey,
      Token: temporary.sessionToken,
      Expiration: new Date(Date.now() + 3_600_000).toISOString(),
      RoleArn: 'arn:aws:iam::123456789012:role/svcgw-task',
    });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const handle =
        req.method === 'GET' && req.url === '/container-credentials'
          ? Promise.resolve(container(req, res))
          : String(req.headers['x-amz-target'] ?? '').startsWith('secretsmanager.')
            ? secretsManager(req, res, body)
            : sts(req, res, body);
      handle.catch((error: unknown) => {
        res.writeHead(500);
        res.end(String(error));
      });
    });
  });
  const listening = await listenOnLoopback(server);
  return {
    url: listening.url,
    region,
    calls,
    /** A long-term access key (AKIA…) the mock accepts. */
    addAccessKey(label: string) {
      const accessKeyId = `AKIA${randomBytes(8).toString('hex').toUpperCase()}`;
      const secretAccessKey = randomBytes(30).toString('base64');
      identities.set(accessKeyId, { secretAccessKey, label });
      return { accessKeyId, secretAccessKey };
    },
    /** A role that `trusted` identities may assume, with `externalId` when given. */
    addRole(arn: string, trusted: string[], externalId: string | null = null) {
      roles.set(arn, { externalId, trusted });
    },
    /** Serves task-role credentials at `${url}/container-credentials` to callers sending `token`. */
    serveContainerCredentials(token: string, identity = 'task-role') {
      containerCredentials.token = token;
      containerCredentials.identity = identity;
    },
    putSecret(name: string, value: string) {
      const stored = secrets.get(name);
      secrets.set(name, { value, versions: (stored?.versions ?? 0) + 1 });
    },
    secret: (name: string) => secrets.get(name)?.value,
    close: () => listening.close(),
  };
}

export type MockAws = Awaited<ReturnType<typeof startMockAws>>;
