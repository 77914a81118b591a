import { AppError } from '../../../lib/errors.js';
import type { AdapterContext } from '../types.js';
import type { AwsCredentials } from './sign.js';

/** How a request to Bedrock is authenticated: SigV4 with AWS credentials, or a Bedrock API key. */
export type BedrockAuth = { kind: 'sigv4'; credentials: AwsCredentials } | { kind: 'bearer'; token: string };

export interface BedrockTarget {
  auth: BedrockAuth;
  /** Null only with an API key and a custom host, where nothing needs it. */
  region: string | null;
  /** `https://bedrock-runtime.{region}.amazonaws.com`, or the custom host. */
  runtimeBase: string;
  /** `https://bedrock-agent-runtime.{region}.amazonaws.com`, or the custom host. */
  agentRuntimeBase: string;
}

/** Stored configuration fields; the secret ones match SECRET_FIELD, so they are sealed at rest. */
export const CONFIG_FIELDS = {
  accessKeyId: 'aws_access_key_id',
  secretAccessKey: 'aws_secret_access_key',
  sessionToken: 'aws_session_token',
  region: 'aws_region',
} as const;

/** Client headers, for the direct mode (`x-service-provider: bedrock`). */
export const HEADERS = {
  accessKeyId: 'x-service-aws-access-key-id',
  secretAccessKey: 'x-service-aws-secret-access-key',
  sessionToken: 'x-service-aws-session-token',
  region: 'x-service-aws-region',
} as const;

/**
 * The region becomes part of a host name, so only the shape AWS uses is accepted
 * (`us-east-1`, `us-gov-west-1`, `ap-southeast-2`): nothing a client sends can redirect the
 * signed request elsewhere.
 */
const REGION_RE = /^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$/;

/**
 * Credentials, region and hosts of one request. A stored provider's configurations win over
 * client headers; AWS keys win over a bearer key (the OpenAI SDKs always send one), which is
 * used as a Bedrock API key only when no AWS keys are given. Messages never carry a secret.
 */
export function resolveBedrockTarget(ctx: AdapterContext): BedrockTarget {
  const config = ctx.target.configurations ?? {};
  const fromConfig = (name: string) => text(config[name]);
  const fromHeader = (name: string) =>
    text(Array.isArray(ctx.headers[name]) ? ctx.headers[name]?.[0] : ctx.headers[name]);

  const region = fromConfig(CONFIG_FIELDS.region) ?? fromHeader(HEADERS.region);
  if (region !== undefined && !REGION_RE.test(region)) {
    throw new AppError(
      'PROVIDER_CONFIG',
      `AWS region '${region.slice(0, 40)}' is not a region name such as us-east-1.`,
      { param: HEADERS.region },
    );
  }

  const auth = resolveAuth(ctx, fromConfig, fromHeader);
  const customBase = ctx.target.customHost ? baseOf(ctx.target.customHost) : null;
  if (region === undefined && (auth.kind === 'sigv4' || customBase === null)) {
    throw new AppError(
      'PROVIDER_CONFIG',
      `Bedrock needs an AWS region: set ${CONFIG_FIELDS.region} on the provider or send ${HEADERS.region}.`,
      { param: HEADERS.region },
    );
  }
  return {
    auth,
    region: region ?? null,
    runtimeBase: customBase ?? `https://bedrock-runtime.${region}.amazonaws.com`,
    agentRuntimeBase: customBase ?? `https://bedrock-agent-runtime.${region}.amazonaws.com`,
  };
}

function resolveAuth(
  ctx: AdapterContext,
  fromConfig: (name: string) => string | undefined,
  fromHeader: (name: string) => string | undefined,
): BedrockAuth {
  const stored = keysFrom(fromConfig, CONFIG_FIELDS);
  if (stored) return { kind: 'sigv4', credentials: stored };
  const sent = keysFrom(fromHeader, HEADERS);
  if (sent) return { kind: 'sigv4', credentials: sent };
  const bearer = text(ctx.target.apiKey);
  if (bearer) return { kind: 'bearer', token: bearer };
  throw new AppError(
    'PROVIDER_CONFIG',
    `Bedrock needs AWS credentials (${CONFIG_FIELDS.accessKeyId} and ${CONFIG_FIELDS.secretAccessKey} on the provider, or the ${HEADERS.accessKeyId} and ${HEADERS.secretAccessKey} headers) or a Bedrock API key as Authorization: Bearer.`,
    { param: 'authorization' },
  );
}

function keysFrom(
  read: (name: string) => string | undefined,
  names: { accessKeyId: string; secretAccessKey: string; sessionToken: string },
): AwsCredentials | null {
  const accessKeyId = read(names.accessKeyId);
  const secretAccessKey = read(names.secretAccessKey);
  if (accessKeyId === undefined && secretAccessKey === undefined) return null;
  if (accessKeyId === undefined || secretAccessKey === undefined) {
    throw new AppError(
      'PROVIDER_CONFIG',
      `AWS credentials need both ${names.accessKeyId} and ${names.secretAccessKey}.`,
      { param: accessKeyId === undefined ? names.accessKeyId : names.secretAccessKey },
    );
  }
  const sessionToken = read(names.sessionToken);
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
}

/** A custom host replaces both Bedrock hosts: its origin plus its path, without a trailing slash. */
function baseOf(customHost: string): string {
  let url: URL;
  try {
    url = new URL(customHost);
  } catch {
    throw new AppError('PROVIDER_CONFIG', 'The custom host is not a valid URL.', { param: 'x-service-custom-host' });
  }
  const path = url.pathname.replace(/^\/+|\/+$/g, '');
  return path ? `${url.origin}/${path}` : url.origin;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}
