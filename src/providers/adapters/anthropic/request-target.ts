import type { IncomingHttpHeaders } from 'node:http';
import { AppError } from '../../../lib/errors.js';
import { ProviderConfigError, UpstreamPathError } from '../../errors.js';
import { buildUpstreamTarget } from '../../upstream-target.js';
import type { AdapterContext } from '../types.js';

/** The API version the translation is written against; a stored provider may pin another. */
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

/** Client headers that feed the provider's own headers (documented in docs/providers/anthropic.md). */
export const VERSION_HEADER = 'x-service-anthropic-version';
export const BETA_HEADER = 'x-service-anthropic-beta';

/**
 * The URL (the default base or the custom host, joined the way OpenAI-compatible providers
 * are) and the headers Anthropic needs. `clientHeaders` says whether the client's own
 * `anthropic-version` is forwarded by the gateway (pass-through), in which case it is kept.
 */
export function anthropicTarget(
  path: string,
  ctx: AdapterContext,
  options: { passThrough: boolean },
): { url: string; headers: Record<string, string> } {
  const url = targetUrl(path, ctx);
  const headers: Record<string, string> = {};
  const apiKey = ctx.target.apiKey;
  if (apiKey) headers['x-api-key'] = apiKey;
  const clientVersion = options.passThrough ? headerValue(ctx.headers, 'anthropic-version') : undefined;
  headers['anthropic-version'] = clientVersion ?? anthropicVersion(ctx);
  const beta = anthropicBeta(ctx, options.passThrough);
  if (beta) headers['anthropic-beta'] = beta;
  return { url, headers };
}

/** Client header, then the stored provider's `anthropic_version`, then the default. */
function anthropicVersion(ctx: AdapterContext): string {
  const stored = ctx.target.configurations?.anthropic_version;
  return (
    headerValue(ctx.headers, VERSION_HEADER) ??
    (typeof stored === 'string' && stored.trim() !== '' ? stored.trim() : DEFAULT_ANTHROPIC_VERSION)
  );
}

/**
 * Every beta asked for, in one comma-separated `anthropic-beta`: the config's `anthropic_beta`,
 * the stored provider's `anthropic_beta`, `x-service-anthropic-beta`, and on pass-through the
 * client's own `anthropic-beta` (which this header replaces, so it must be kept in it).
 */
function anthropicBeta(ctx: AdapterContext, passThrough: boolean): string | undefined {
  const stored = ctx.target.configurations?.anthropic_beta;
  const sources = [
    ctx.options.anthropicBeta,
    typeof stored === 'string' ? stored : undefined,
    headerValue(ctx.headers, BETA_HEADER),
    passThrough ? headerValue(ctx.headers, 'anthropic-beta') : undefined,
  ];
  const names = sources.flatMap((value) =>
    (value ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean),
  );
  return names.length > 0 ? [...new Set(names)].join(',') : undefined;
}

function targetUrl(path: string, ctx: AdapterContext): string {
  try {
    return buildUpstreamTarget(ctx.provider, path, { apiKey: null, customHost: ctx.target.customHost ?? null }).url;
  } catch (error) {
    if (error instanceof ProviderConfigError)
      throw new AppError('PROVIDER_CONFIG', error.message, { param: 'x-service-custom-host' });
    if (error instanceof UpstreamPathError) throw new AppError('INVALID_REQUEST', error.message, { param: 'path' });
    throw error;
  }
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const text = Array.isArray(value) ? value.join(',') : value;
  return text !== undefined && text.trim() !== '' ? text.trim() : undefined;
}
