import type { IncomingHttpHeaders } from 'node:http';
import { serviceKeyInAuthorization } from '../auth/bearer-key.js';
import { boundedMemo } from '../lib/bounded-memo.js';
import { invalid } from '../lib/errors.js';
import { newTimeOrderedId } from '../lib/ids.js';

/**
 * The gateway's own request headers, read and checked once per request. Errors name the header
 * and never repeat its value: provider keys end up in the wrong header often enough.
 */
export interface GatewayHeaders {
  /** `x-service-provider`: `@<provider slug>` or a provider name. */
  provider: string | null;
  customHost: string | null;
  virtualKey: string | null;
  /** The provider key from `Authorization: Bearer …` (direct and custom-host modes). */
  bearer: string | null;
  traceId: string;
  metadata: Record<string, string> | null;
  azure: { resourceName?: string; deploymentId?: string; apiVersion?: string };
  /** Microsoft Entra ID inputs came as headers (x-service-azure-client-id, …): Azure needs no key then. */
  azureEntra: boolean;
  /** Tracing: this request's span within its trace. */
  spanId: string | null;
  parentSpanId: string | null;
  spanName: string | null;
  /** `x-service-cache-namespace`: entries are shared only within one namespace. */
  cacheNamespace: string | null;
  /** `x-service-cache-force-refresh: true`: skip the cache lookup and store the fresh answer. */
  cacheForceRefresh: boolean;
}

const TRACE_ID_RE = /^[A-Za-z0-9_.:/-]{1,128}$/;
/** Read in place: lower-casing the whole header copied it on every request. */
const BEARER = /^bearer /i;
const MAX_METADATA_KEYS = 64;
const MAX_METADATA_VALUE = 1024;

const one = (value: string | string[] | undefined): string | null => {
  const v = Array.isArray(value) ? value[0] : value;
  return v === undefined || v === '' ? null : v;
};

export function readGatewayHeaders(headers: IncomingHttpHeaders): GatewayHeaders {
  const traceHeader = one(headers['x-service-trace-id']);
  if (traceHeader !== null && !TRACE_ID_RE.test(traceHeader)) {
    throw invalid('x-service-trace-id', 'x-service-trace-id must be 1–128 characters of A-Z a-z 0-9 _ . : / -.');
  }
  const authorization = one(headers.authorization);
  // An svcgw key that authenticated the request (no x-service-api-key) is never a provider key.
  const bearer =
    authorization !== null && BEARER.test(authorization) && serviceKeyInAuthorization(headers) === null
      ? authorization.slice(7).trim() || null
      : null;
  const customHost = one(headers['x-service-custom-host']);
  if (customHost !== null) checkCustomHost(customHost);
  const azure: GatewayHeaders['azure'] = {};
  const resourceName = one(headers['x-service-azure-resource-name']);
  const deploymentId = one(headers['x-service-azure-deployment-id']);
  const apiVersion = one(headers['x-service-azure-api-version']);
  if (resourceName) azure.resourceName = resourceName;
  if (deploymentId) azure.deploymentId = deploymentId;
  if (apiVersion) azure.apiVersion = apiVersion;
  return {
    provider: one(headers['x-service-provider']),
    customHost,
    virtualKey: one(headers['x-service-virtual-key']),
    bearer,
    traceId: traceHeader ?? newTimeOrderedId(),
    metadata: parseMetadata(one(headers['x-service-metadata'])),
    azure,
    azureEntra: headers['x-service-azure-client-id'] !== undefined,
    spanId: idHeader(headers, 'x-service-span-id'),
    parentSpanId: idHeader(headers, 'x-service-parent-span-id'),
    spanName: textHeader(headers, 'x-service-span-name', 255),
    cacheNamespace: textHeader(headers, 'x-service-cache-namespace', 255),
    cacheForceRefresh: one(headers['x-service-cache-force-refresh'])?.toLowerCase() === 'true',
  };
}

function idHeader(headers: IncomingHttpHeaders, name: string): string | null {
  const value = one(headers[name]);
  if (value !== null && !TRACE_ID_RE.test(value))
    throw invalid(name, `${name} must be 1–128 characters of A-Z a-z 0-9 _ . : / -.`);
  return value;
}

function textHeader(headers: IncomingHttpHeaders, name: string, max: number): string | null {
  const value = one(headers[name]);
  if (value !== null && value.length > max) throw invalid(name, `${name} is longer than ${max} characters.`);
  return value;
}

/** Throws for a custom host the gateway does not call; remembered, since a client sends the same one on every request. */
const checkCustomHost = boundedMemo(1000, (value: string): true => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid('x-service-custom-host', 'x-service-custom-host must be an absolute http(s) URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalid('x-service-custom-host', 'x-service-custom-host must use http or https.');
  // Named, never echoed: the value holds a password.
  if (url.username !== '' || url.password !== '') {
    throw invalid(
      'x-service-custom-host',
      'x-service-custom-host must not carry credentials (user:password@); send the provider key in Authorization: Bearer <key>.',
    );
  }
  return true;
});

/** `x-service-metadata`: a JSON object whose values are strings (what limits and logs filter on). */
export function parseMetadata(raw: string | null): Record<string, string> | null {
  if (raw === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw invalid('x-service-metadata', 'x-service-metadata must be a JSON object of strings.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw invalid('x-service-metadata', 'x-service-metadata must be a JSON object of strings.');
  const entries = Object.entries(parsed);
  if (entries.length > MAX_METADATA_KEYS)
    throw invalid('x-service-metadata', `x-service-metadata holds at most ${MAX_METADATA_KEYS} keys.`);
  for (const [key, value] of entries) {
    if (typeof value !== 'string') throw invalid('x-service-metadata', `x-service-metadata.${key} must be a string.`);
    if (value.length > MAX_METADATA_VALUE)
      throw invalid('x-service-metadata', `x-service-metadata.${key} is longer than ${MAX_METADATA_VALUE} characters.`);
  }
  return parsed as Record<string, string>;
}
