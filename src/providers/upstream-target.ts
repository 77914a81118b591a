import { boundedMemo } from '../lib/bounded-memo.js';
import { ProviderConfigError, UpstreamPathError } from './errors.js';
import type { ProviderDefinition, TargetContext, UpstreamTarget } from './types.js';

/**
 * Default Azure OpenAI `api-version`: the latest GA release of the deployment-scoped inference
 * API. Newer features need a preview version, which an operator sets per provider.
 */
export const AZURE_DEFAULT_API_VERSION = '2024-10-21';

/** Azure resource names become a host label, so they are held to what a label allows. */
const AZURE_RESOURCE_RE = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})$/;

/**
 * Turns "provider + path + credentials" into the request the upstream client sends: the full
 * URL and the auth header. `endpointPath` is relative to the provider's versioned base
 * (`/chat/completions`) and may carry a query string, which is kept as it is.
 */
export function buildUpstreamTarget(
  provider: ProviderDefinition,
  endpointPath: string,
  ctx: TargetContext,
): UpstreamTarget {
  const { pathname, query } = splitPath(endpointPath);
  const url =
    provider.name === 'azure-openai'
      ? azureUrl(provider, pathname, query, ctx)
      : `${resolveBase(provider, ctx.customHost)}${pathname}${query ? `?${query}` : ''}`;
  return { url, headers: authHeaders(provider, ctx.apiKey) };
}

function authHeaders(provider: ProviderDefinition, apiKey: string | null): Record<string, string> {
  if (apiKey === null || apiKey === '') return {};
  switch (provider.auth.kind) {
    case 'bearer':
      return { authorization: `Bearer ${apiKey}` };
    case 'header':
      return { [provider.auth.header.toLowerCase()]: apiKey };
    case 'none':
    case 'adapter': // the provider's adapter authenticates its own requests
      return {};
  }
}

const customBases = new Map<string, string>();
const MAX_CACHED_BASES = 1000;

/**
 * The base every path is appended to, without a trailing slash. A custom host with a path is
 * used as it is; a bare origin ('http://gpu-box:11434') gets the default base's path ('/v1'),
 * since that is what operators mean when they move a known provider to another machine.
 */
function resolveBase(provider: ProviderDefinition, customHost: string | null | undefined): string {
  if (customHost) {
    // Clients send the same custom host on every request: parse it once.
    const cacheKey = `${provider.name} ${customHost}`;
    const known = customBases.get(cacheKey);
    if (known !== undefined) return known;
    const custom = parseHost(provider, customHost);
    const customPath = trimSlashes(custom.pathname);
    const defaultPath = provider.baseUrl ? trimSlashes(new URL(provider.baseUrl).pathname) : '';
    const path = customPath || defaultPath;
    const base = path ? `${custom.origin}/${path}` : custom.origin;
    if (customBases.size < MAX_CACHED_BASES) customBases.set(cacheKey, base);
    return base;
  }
  if (provider.baseUrl) return provider.baseUrl.replace(/\/+$/, '');
  throw new ProviderConfigError(
    provider.name,
    `Provider '${provider.name}' has no default base URL: set a custom host for it (its account-specific OpenAI-compatible base URL).`,
    ['customHost'],
  );
}

/**
 * `{origin}/openai/deployments/{deploymentId}{path}?api-version=…`, where the origin is the
 * custom host or `https://{resourceName}.openai.azure.com`. The configured api-version wins
 * over one in the client's query string, which wins over the default.
 */
function azureUrl(provider: ProviderDefinition, pathname: string, query: string, ctx: TargetContext): string {
  const azure = ctx.azure ?? {};
  const missing: string[] = [];
  if (!ctx.customHost && !azure.resourceName) missing.push('resourceName');
  if (!azure.deploymentId) missing.push('deploymentId');
  if (azure.apiVersion !== undefined && azure.apiVersion.trim() === '') missing.push('apiVersion');
  if (missing.length > 0) {
    throw new ProviderConfigError(
      provider.name,
      `Provider '${provider.name}' needs ${missing.join(', ')} in its Azure settings${
        missing.includes('resourceName') ? ' (or a custom host)' : ''
      }.`,
      missing,
    );
  }

  let origin: string;
  if (ctx.customHost) {
    const custom = parseHost(provider, ctx.customHost);
    const path = trimSlashes(custom.pathname);
    origin = path ? `${custom.origin}/${path}` : custom.origin;
  } else {
    const resource = azure.resourceName ?? '';
    if (!AZURE_RESOURCE_RE.test(resource)) {
      throw new ProviderConfigError(
        provider.name,
        `Azure resourceName '${resource}' is not valid: use letters, digits and hyphens only.`,
        ['resourceName'],
      );
    }
    origin = `https://${resource}.openai.azure.com`;
  }

  const params = query === '' ? [] : query.split('&').filter((pair) => pair !== '');
  const fromClient = params.find((pair) => pairName(pair) === 'api-version');
  const others = params.filter((pair) => pairName(pair) !== 'api-version');
  const version = azure.apiVersion
    ? `api-version=${encodeURIComponent(azure.apiVersion.trim())}`
    : (fromClient ?? `api-version=${AZURE_DEFAULT_API_VERSION}`);
  const deployment = encodeURIComponent(azure.deploymentId ?? '');
  return `${origin}/openai/deployments/${deployment}${pathname}?${[version, ...others].join('&')}`;
}

function pairName(pair: string): string {
  const name = pair.split('=', 1)[0] ?? '';
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}

function parseHost(provider: ProviderDefinition, customHost: string): URL {
  let url: URL;
  try {
    url = new URL(customHost);
  } catch {
    throw new ProviderConfigError(provider.name, 'The custom host is not a valid URL.', ['customHost']);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ProviderConfigError(provider.name, 'The custom host must be an http(s) URL.', ['customHost']);
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new ProviderConfigError(
      provider.name,
      'The custom host must be a plain base URL, without credentials, query string or fragment.',
      ['customHost'],
    );
  }
  return url;
}

/**
 * Splits the path from its query string and normalises it to one leading slash. Dot segments
 * are refused because URL parsers resolve them (also when percent-encoded), which would let
 * a client step out of the provider's base path with the gateway's credential.
 */
const splitPath = boundedMemo(MAX_CACHED_BASES, (endpointPath) => Object.freeze(splitPathOnce(endpointPath)));

function splitPathOnce(endpointPath: string): { pathname: string; query: string } {
  const withoutHash = endpointPath.split('#', 1)[0] ?? '';
  const at = withoutHash.indexOf('?');
  const rawPath = at === -1 ? withoutHash : withoutHash.slice(0, at);
  const query = at === -1 ? '' : withoutHash.slice(at + 1);
  if (rawPath.includes('\\')) throw new UpstreamPathError(`Path '${endpointPath}' must not contain backslashes.`);
  const segments = rawPath.split('/');
  if (segments.some(isDotSegment)) {
    throw new UpstreamPathError(`Path '${endpointPath}' must not contain '.' or '..' segments.`);
  }
  const trimmed = rawPath.replace(/^\/+/, '');
  return { pathname: trimmed === '' ? '' : `/${trimmed}`, query };
}

function isDotSegment(segment: string): boolean {
  const lowered = segment.toLowerCase().replace(/%2e/g, '.');
  return lowered === '.' || lowered === '..';
}

function trimSlashes(path: string): string {
  return path.replace(/^\/+|\/+$/g, '');
}
