import { AppError } from '../../../lib/errors.js';
import { ProviderConfigError, UpstreamPathError } from '../../errors.js';
import { buildUpstreamTarget } from '../../upstream-target.js';
import type { AdapterContext } from '../types.js';
import { CLOUD_PLATFORM_SCOPE, parseServiceAccount, type ServiceAccount, type TokenCache } from './vertex-auth.js';

/** Client headers that carry Vertex AI settings (stored configurations win over them). */
export const VERTEX_HEADERS = {
  projectId: 'x-service-vertex-project-id',
  region: 'x-service-vertex-region',
  serviceAccount: 'x-service-vertex-service-account-json',
} as const;

export interface Target {
  url: string;
  headers: Record<string, string>;
}

const REGION = /^[a-z0-9-]{1,63}$/;
const PROJECT = /^[A-Za-z0-9.:-]{1,128}$/;

function header(ctx: AdapterContext, name: string): string | undefined {
  const value = ctx.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first.trim() === '' ? undefined : first.trim();
}

function configured(ctx: AdapterContext, name: string): unknown {
  const value = ctx.target.configurations?.[name];
  return value === null || value === '' ? undefined : value;
}

/** `buildUpstreamTarget` for the URL (custom host rules, dot segments refused), its errors as AppErrors. */
function urlFor(ctx: AdapterContext, baseUrl: string | null, path: string): string {
  try {
    const provider = baseUrl === null ? ctx.provider : { ...ctx.provider, baseUrl };
    return buildUpstreamTarget(provider, path, { apiKey: null, customHost: ctx.target.customHost ?? null }).url;
  } catch (error) {
    if (error instanceof ProviderConfigError)
      throw new AppError('PROVIDER_CONFIG', error.message, { param: 'x-service-custom-host' });
    if (error instanceof UpstreamPathError) throw new AppError('INVALID_REQUEST', error.message, { param: 'path' });
    throw error;
  }
}

/** The Gemini API: `{base}{path}` with the key in `x-goog-api-key`. */
export function geminiTarget(ctx: AdapterContext, path: string): Target {
  const headers: Record<string, string> = {};
  if (ctx.target.apiKey) headers['x-goog-api-key'] = ctx.target.apiKey;
  return { url: urlFor(ctx, null, path), headers };
}

interface VertexSettings {
  project: string | undefined;
  region: string | undefined;
  account: ServiceAccount | null;
}

function vertexSettings(ctx: AdapterContext): VertexSettings {
  const stored = configured(ctx, 'vertex_service_account_json');
  const fromHeader = header(ctx, VERTEX_HEADERS.serviceAccount);
  const account =
    stored !== undefined
      ? parseServiceAccount(stored, 'the stored vertex_service_account_json')
      : fromHeader !== undefined
        ? parseServiceAccount(fromHeader, VERTEX_HEADERS.serviceAccount)
        : null;
  const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);
  const project =
    text(configured(ctx, 'vertex_project_id')) ?? header(ctx, VERTEX_HEADERS.projectId) ?? account?.projectId;
  const region = text(configured(ctx, 'vertex_region')) ?? header(ctx, VERTEX_HEADERS.region);
  if (project !== undefined && !PROJECT.test(project))
    throw new AppError(
      'PROVIDER_CONFIG',
      'The Vertex AI project id may hold letters, digits, hyphens, dots and colons only.',
      { param: VERTEX_HEADERS.projectId },
    );
  if (region !== undefined && !REGION.test(region))
    throw new AppError(
      'PROVIDER_CONFIG',
      'The Vertex AI region may hold lowercase letters, digits and hyphens only (such as us-central1 or global).',
      { param: VERTEX_HEADERS.region },
    );
  return { project, region, account };
}

/** `https://{region}-aiplatform.googleapis.com/v1`, or the host without prefix for the global location. */
function vertexBase(region: string | undefined): string {
  return region === undefined || region === 'global'
    ? 'https://aiplatform.googleapis.com/v1'
    : `https://${region}-aiplatform.googleapis.com/v1`;
}

async function vertexAuth(
  ctx: AdapterContext,
  account: ServiceAccount | null,
  cache: TokenCache,
): Promise<Record<string, string>> {
  if (account)
    return {
      authorization: `Bearer ${await cache.accessToken(account, CLOUD_PLATFORM_SCOPE, ctx.dispatcher, ctx.now)}`,
    };
  if (ctx.target.apiKey) return { authorization: `Bearer ${ctx.target.apiKey}` };
  throw new AppError(
    'PROVIDER_CONFIG',
    `Vertex AI needs a service account (stored vertex_service_account_json, or base64 of its JSON in ${VERTEX_HEADERS.serviceAccount}) or an access token in Authorization: Bearer.`,
    { param: VERTEX_HEADERS.serviceAccount },
  );
}

/**
 * A publisher model method on Vertex AI:
 * `{base}/projects/{project}/locations/{region}/publishers/google/models/{model}:{method}`.
 */
export async function vertexModelTarget(ctx: AdapterContext, modelPath: string, cache: TokenCache): Promise<Target> {
  const settings = vertexSettings(ctx);
  const missing = [
    settings.project === undefined ? `project id (vertex_project_id or ${VERTEX_HEADERS.projectId})` : null,
    settings.region === undefined ? `region (vertex_region or ${VERTEX_HEADERS.region})` : null,
  ].filter((item): item is string => item !== null);
  if (missing.length > 0)
    throw new AppError('PROVIDER_CONFIG', `Vertex AI needs a ${missing.join(' and a ')}.`, {
      param: VERTEX_HEADERS.region,
    });
  const path = `/projects/${encodeURIComponent(settings.project ?? '')}/locations/${settings.region}/publishers/google${modelPath}`;
  return {
    url: urlFor(ctx, vertexBase(settings.region), path),
    headers: await vertexAuth(ctx, settings.account, cache),
  };
}

/** Any other Vertex AI path, relative to the versioned (regional) base. */
export async function vertexPassThroughTarget(ctx: AdapterContext, path: string, cache: TokenCache): Promise<Target> {
  const settings = vertexSettings(ctx);
  return {
    url: urlFor(ctx, vertexBase(settings.region), path),
    headers: await vertexAuth(ctx, settings.account, cache),
  };
}
