import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { request, type Dispatcher } from 'undici';
import { AppError } from '../lib/errors.js';

/** The resource scope of Azure OpenAI (Azure AI services) for app-only tokens. */
export const DEFAULT_ENTRA_SCOPE = 'https://cognitiveservices.azure.com/.default';
/** Microsoft Entra ID's global authority; sovereign clouds and tests set `azure_authority_host`. */
export const DEFAULT_AUTHORITY_HOST = 'https://login.microsoftonline.com';
/** A token is replaced this long before it expires, so that no request carries one that dies in flight. */
const REFRESH_MARGIN_MS = 5 * 60_000;
const MAX_DESCRIPTION = 500;

/** What the client-credentials flow needs: an app registration (tenant, client, secret) and a scope. */
export interface EntraInputs {
  tenantId: string;
  clientId: string;
  clientSecret: string;
  scope: string;
  /** Origin (and optional path) of the authority, without a trailing slash. */
  authorityHost: string;
}

/** The token endpoint said no, or could not be reached. The message never holds the secret. */
export class EntraTokenError extends AppError {
  /** The token endpoint's HTTP status; null when it was not reached. */
  readonly tokenStatus: number | null;

  constructor(message: string, tokenStatus: number | null, cause?: unknown) {
    super('UPSTREAM_ERROR', message, { param: null, cause });
    this.name = 'EntraTokenError';
    this.tokenStatus = tokenStatus;
  }
}

const FIELDS = [
  { name: 'tenantId', config: 'azure_tenant_id', header: 'x-service-azure-tenant-id' },
  { name: 'clientId', config: 'azure_client_id', header: 'x-service-azure-client-id' },
  { name: 'clientSecret', config: 'azure_client_secret', header: 'x-service-azure-client-secret' },
] as const;

const text = (value: unknown): string | null => {
  const first: unknown = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first.trim() !== '' ? first.trim() : null;
};

/**
 * The Entra ID inputs of a request, or null when there are none (api-key auth applies). A stored
 * provider's `configurations` win; otherwise the `x-service-azure-*` headers. The three fields
 * come from one place, never mixed, and a partial set is an error that names what is missing.
 * The authority host is read from configurations only: a header must not be able to send a
 * client secret to a host of the caller's choosing.
 */
export function readEntraInputs(
  configurations: Readonly<Record<string, unknown>> | undefined,
  headers: IncomingHttpHeaders,
  scope: string | undefined = DEFAULT_ENTRA_SCOPE,
): EntraInputs | null {
  const config = configurations ?? {};
  const fromConfig = FIELDS.map((field) => text(config[field.config]));
  const fromHeaders = FIELDS.map((field) => text(headers[field.header]));
  const useConfig = fromConfig.some((value) => value !== null);
  const values = useConfig ? fromConfig : fromHeaders;
  if (values.every((value) => value === null)) return null;

  const missing = FIELDS.filter((_, i) => values[i] === null).map((field) => (useConfig ? field.config : field.header));
  if (missing.length > 0) {
    throw new AppError('PROVIDER_CONFIG', `Microsoft Entra ID auth needs ${missing.join(', ')} as well.`, {
      param: missing[0] ?? null,
    });
  }
  const [tenantId, clientId, clientSecret] = values as [string, string, string];
  if (!/^[A-Za-z0-9][A-Za-z0-9.-]*$/.test(tenantId)) {
    throw new AppError('PROVIDER_CONFIG', 'The Azure tenant id must be a directory id (GUID) or a domain name.', {
      param: useConfig ? 'azure_tenant_id' : 'x-service-azure-tenant-id',
    });
  }
  return {
    tenantId,
    clientId,
    clientSecret,
    scope: scope && scope.trim() !== '' ? scope.trim() : DEFAULT_ENTRA_SCOPE,
    authorityHost: authorityHost(config.azure_authority_host),
  };
}

function authorityHost(value: unknown): string {
  const raw = text(value);
  if (raw === null) return DEFAULT_AUTHORITY_HOST;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('PROVIDER_CONFIG', `azure_authority_host '${raw}' is not a valid URL.`, {
      param: 'azure_authority_host',
    });
  }
  if (
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.search !== '' ||
    url.hash !== '' ||
    url.username !== '' ||
    url.password !== ''
  ) {
    throw new AppError('PROVIDER_CONFIG', 'azure_authority_host must be a plain http(s) URL.', {
      param: 'azure_authority_host',
    });
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

interface CachedToken {
  token: string;
  /** Epoch ms after which a new token is fetched. */
  refreshAt: number;
}

export interface EntraTokenSource {
  /** A valid access token for the inputs: from the cache, or freshly fetched. */
  token(inputs: EntraInputs): Promise<string>;
  /** Forgets every cached token (tests; credential rotation). */
  clear(): void;
}

/**
 * Client-credentials tokens, cached until shortly before they expire. The cache key holds a
 * digest of the secret besides tenant, client and scope: without it, a caller who knows a
 * client id but sends a wrong secret would be handed a token minted for the right one.
 * Concurrent requests for the same key share one token request.
 */
export function createEntraTokenSource(deps: {
  dispatcher?: Dispatcher | undefined;
  now: () => number;
}): EntraTokenSource {
  const cache = new Map<string, CachedToken>();
  const inFlight = new Map<string, Promise<CachedToken>>();

  return {
    async token(inputs) {
      const key = cacheKey(inputs);
      const cached = cache.get(key);
      if (cached && deps.now() < cached.refreshAt) return cached.token;
      let pending = inFlight.get(key);
      if (!pending) {
        pending = fetchToken(inputs, deps).finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      const fresh = await pending;
      cache.set(key, fresh);
      return fresh.token;
    },
    clear() {
      cache.clear();
    },
  };
}

function cacheKey(inputs: EntraInputs): string {
  const secret = createHash('sha256').update(inputs.clientSecret).digest('base64url');
  return [inputs.authorityHost, inputs.tenantId, inputs.clientId, inputs.scope, secret].join('\n');
}

async function fetchToken(
  inputs: EntraInputs,
  deps: { dispatcher?: Dispatcher | undefined; now: () => number },
): Promise<CachedToken> {
  const url = `${inputs.authorityHost}/${encodeURIComponent(inputs.tenantId)}/oauth2/v2.0/token`;
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: inputs.clientId,
    client_secret: inputs.clientSecret,
    scope: inputs.scope,
  });
  const startedAt = deps.now();
  let status: number;
  let body: unknown;
  try {
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      ...(deps.dispatcher ? { dispatcher: deps.dispatcher } : {}),
    });
    status = res.statusCode;
    const raw = await res.body.text();
    try {
      body = JSON.parse(raw);
    } catch {
      body = null;
    }
  } catch (error) {
    throw new EntraTokenError(
      `Microsoft Entra ID could not be reached at ${inputs.authorityHost} to get an access token.`,
      null,
      scrubbed(error, inputs.clientSecret),
    );
  }

  const answer = (typeof body === 'object' && body !== null ? body : {}) as {
    access_token?: unknown;
    expires_in?: unknown;
    error?: unknown;
    error_description?: unknown;
  };
  if (status >= 400 || typeof answer.access_token !== 'string' || answer.access_token === '') {
    const code = typeof answer.error === 'string' ? `, ${answer.error}` : '';
    const description =
      typeof answer.error_description === 'string'
        ? `: ${answer.error_description.split(inputs.clientSecret).join('[REDACTED]').slice(0, MAX_DESCRIPTION)}`
        : '';
    throw new EntraTokenError(
      `Microsoft Entra ID refused the token request for client ${inputs.clientId} (HTTP ${status}${code})${description}`,
      status,
    );
  }
  // expires_in is seconds (a number, or a numeric string on older endpoints).
  const lifetimeMs = Math.max(0, Number(answer.expires_in ?? 0) * 1000) || 60 * 60_000;
  const margin = Math.min(REFRESH_MARGIN_MS, lifetimeMs / 2);
  return { token: answer.access_token, refreshAt: startedAt + lifetimeMs - margin };
}

/** A transport error as a cause, without the secret if some layer echoed the form body. */
function scrubbed(error: unknown, secret: string): Error {
  const message = error instanceof Error ? error.message : String(error);
  return new Error(message.split(secret).join('[REDACTED]'));
}

const sharedSources = new WeakMap<object, EntraTokenSource>();
const NO_DISPATCHER = {};

/**
 * `Authorization: Bearer <token>` for Azure OpenAI when Entra ID inputs are given, null
 * otherwise (the caller then uses api-key auth). Tokens are cached per dispatcher, so one
 * gateway process asks Entra once per token lifetime (the shared cache keeps the clock it was
 * first given, the gateway's); pass `source` to control the cache and its clock.
 */
export async function entraAuthHeaders(
  inputs: EntraInputs | null,
  deps: { dispatcher?: Dispatcher | undefined; now: () => number; source?: EntraTokenSource },
): Promise<Record<string, string> | null> {
  if (!inputs) return null;
  let source = deps.source;
  if (!source) {
    const owner = deps.dispatcher ?? NO_DISPATCHER;
    source = sharedSources.get(owner);
    if (!source) {
      source = createEntraTokenSource({ dispatcher: deps.dispatcher, now: deps.now });
      sharedSources.set(owner, source);
    }
  }
  return { authorization: `Bearer ${await source.token(inputs)}` };
}
