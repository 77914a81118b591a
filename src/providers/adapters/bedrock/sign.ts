import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';

/** AWS credentials as SigV4 takes them; the session token comes with temporary (STS) credentials. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
}

/** Both Bedrock hosts (runtime and agent runtime) sign as the `bedrock` service. */
export const SIGNING_SERVICE = 'bedrock';

/**
 * The SHA-256 (or HMAC-SHA256, given a secret) the signer asks for, over node:crypto. The
 * signing algorithm itself stays in @smithy/signature-v4.
 */
export class Sha256 {
  private hash: Hash | Hmac;

  constructor(private readonly secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = this.fresh();
  }

  private fresh(): Hash | Hmac {
    if (this.secret === undefined) return createHash('sha256');
    return createHmac('sha256', typeof this.secret === 'string' ? this.secret : toBytes(this.secret));
  }

  update(data: string | ArrayBuffer | ArrayBufferView): void {
    if (typeof data === 'string') this.hash.update(data, 'utf8');
    else this.hash.update(toBytes(data));
  }

  reset(): void {
    this.hash = this.fresh();
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
}

function toBytes(data: ArrayBuffer | ArrayBufferView): Uint8Array {
  return ArrayBuffer.isView(data)
    ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    : new Uint8Array(data);
}

export interface SignInput {
  url: URL;
  method: string;
  /** Headers to send and sign besides `host` (content-type). */
  headers: Record<string, string>;
  body: string;
  credentials: AwsCredentials;
  region: string;
  signingDate: Date;
}

/**
 * The request's headers with the SigV4 `authorization`, `x-amz-date` (and
 * `x-amz-security-token`) added. `host` is the URL's own host, port included, so that the
 * signature covers the host the request really goes to (a custom host too).
 */
export async function signRequest(input: SignInput): Promise<Record<string, string>> {
  // Loaded with the first Bedrock request, not by every gateway.
  const { SignatureV4 } = await import('@smithy/signature-v4');
  const signer = new SignatureV4({
    credentials: input.credentials,
    region: input.region,
    service: SIGNING_SERVICE,
    sha256: Sha256,
    // The AWS SDKs leave x-amz-content-sha256 to S3; the payload hash is signed all the same.
    applyChecksum: false,
  });
  const query: Record<string, string> = {};
  for (const [name, value] of input.url.searchParams) query[name] = value;
  const signed = await signer.sign(
    {
      method: input.method,
      protocol: input.url.protocol,
      hostname: input.url.hostname,
      ...(input.url.port ? { port: Number(input.url.port) } : {}),
      path: input.url.pathname,
      query,
      headers: { host: input.url.host, ...input.headers },
      body: input.body,
    },
    { signingDate: input.signingDate },
  );
  return { ...signed.headers };
}
