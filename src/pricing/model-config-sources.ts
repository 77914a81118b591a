import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fetch as undiciFetch } from 'undici';

import type { Clock } from '../lib/clock.js';
import type { Logger } from '../telemetry/logger.js';

/** Where a price or capability came from; the memory cache is not a source, it remembers one. */
export type SourceName = 'proxy' | 'log_store' | 'local';

export interface ModelTable<T> {
  entries: ReadonlyMap<string, T>;
  /** When a remote source fetched the table, so that what was read from it expires with it. */
  fetchedAt?: number;
}

/** One source of model configs (prices or capabilities), asked per provider. Never throws. */
export interface ModelConfigSource<T> {
  readonly name: SourceName;
  tableFor(provider: string): Promise<ModelTable<T> | null>;
}

/** Reads one document; entries it cannot read are listed, not fatal. Throws when the whole document is unreadable. */
export type DocumentParser<T> = (json: unknown) => { entries: Map<string, T>; invalid: string[] };

/** Provider ids are file names and URL segments: nothing that could leave a directory or a path. */
export const PROVIDER_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * The local files, read once at start-up so that a broken file stops the server with its
 * name instead of turning into unknown costs later.
 */
export function loadLocalDirectory<T>(
  dir: string,
  parse: DocumentParser<T>,
): ModelConfigSource<T> & { providers(): Map<string, ReadonlyMap<string, T>> } {
  const byProvider = new Map<string, ReadonlyMap<string, T>>();
  for (const file of readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()) {
    const path = join(dir, file);
    let parsed: ReturnType<DocumentParser<T>>;
    try {
      parsed = parse(JSON.parse(readFileSync(path, 'utf8')));
    } catch (error) {
      throw new Error(`model config file ${path} is invalid: ${(error as Error).message}`, { cause: error });
    }
    if (parsed.invalid.length > 0)
      throw new Error(`model config file ${path} is invalid: ${parsed.invalid.join('; ')}`);
    byProvider.set(basename(file, '.json'), parsed.entries);
  }
  return {
    name: 'local',
    tableFor: async (provider) => {
      const entries = byProvider.get(provider);
      return entries ? { entries } : null;
    },
    providers: () => byProvider,
  };
}

/**
 * Files the log store keeps (`<dir>/<provider>.json`), read when asked and again whenever the
 * file changes, since they may be written while the server runs. A missing file is no table;
 * an unreadable one is logged (once per version of the file) and skipped.
 */
export function createLogStoreDirectory<T>(deps: {
  dir: string;
  parse: DocumentParser<T>;
  logger: Logger;
  what: string;
}): ModelConfigSource<T> {
  const read = new Map<string, { version: string; table: ModelTable<T> | null }>();
  return {
    name: 'log_store',
    async tableFor(provider) {
      const path = join(deps.dir, `${provider}.json`);
      let version: string;
      try {
        const info = await stat(path);
        version = `${info.mtimeMs}:${info.size}`;
      } catch {
        return null;
      }
      const known = read.get(provider);
      if (known?.version === version) return known.table;
      let table: ModelTable<T> | null = null;
      try {
        const parsed = deps.parse(JSON.parse(await readFile(path, 'utf8')));
        if (parsed.invalid.length > 0)
          deps.logger.warn(
            { path, invalid: parsed.invalid.slice(0, 20) },
            `log-store ${deps.what} file has entries that cannot be read; they are skipped`,
          );
        table = { entries: parsed.entries };
      } catch (error) {
        deps.logger.warn(
          { path, err: (error as Error).message },
          `log-store ${deps.what} file cannot be read; falling back to the next source`,
        );
      }
      read.set(provider, { version, table });
      return table;
    },
  };
}

export interface FetchResponseLike {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}
export type FetchLike = (
  url: string,
  init: { signal: AbortSignal; headers: Record<string, string> },
) => Promise<FetchResponseLike>;

const defaultFetch: FetchLike = (url, init) => undiciFetch(url, init);

const MAX_PROXY_BYTES = 32 * 1024 * 1024;

/** The proxy URL as it may be logged: without user info or query (either may carry a secret). */
function loggableUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

/**
 * The model-configs proxy service: `GET {baseUrl}/{path}/{provider}` answers a provider's
 * whole document. A document is kept for `ttlMs` (a 404 too: the proxy has nothing for that
 * provider); a failure (time-out, refused, 5xx, not JSON) is remembered for `retryMs` so that
 * a proxy that is down is not asked on every request, is logged once per provider per `ttlMs`,
 * and leaves the lookup to the next source.
 */
export function createProxySource<T>(deps: {
  baseUrl: string;
  path: 'pricing' | 'general';
  parse: DocumentParser<T>;
  clock: Clock;
  logger: Logger;
  ttlMs: number;
  retryMs: number;
  timeoutMs: number;
  fetchImpl?: FetchLike | undefined;
  /** Whether to ask about this provider at all (the route is public; ids it makes up are not sent). */
  shouldAsk?: (provider: string) => boolean;
}): ModelConfigSource<T> {
  const fetchImpl = deps.fetchImpl ?? defaultFetch;
  const base = deps.baseUrl.replace(/\/+$/, '');
  const documents = new Map<string, { table: ModelTable<T> | null; expiresAt: number }>();
  const inFlight = new Map<string, Promise<ModelTable<T> | null>>();
  const warnedAt = new Map<string, number>();

  function warnOnce(provider: string, url: string, reason: string): void {
    const now = deps.clock.now();
    const last = warnedAt.get(provider);
    if (last !== undefined && now - last < deps.ttlMs) return;
    warnedAt.set(provider, now);
    deps.logger.warn(
      { provider, url: loggableUrl(url), reason },
      `model-configs proxy failed (${deps.path}); using the next source for ${provider} until it answers again`,
    );
  }

  async function fetchDocument(provider: string): Promise<ModelTable<T> | null> {
    const url = `${base}/${deps.path}/${encodeURIComponent(provider)}`;
    const fetchedAt = deps.clock.now();
    const remember = (table: ModelTable<T> | null, forMs: number) => {
      documents.set(provider, { table, expiresAt: fetchedAt + forMs });
      return table;
    };
    try {
      const res = await fetchImpl(url, {
        signal: AbortSignal.timeout(deps.timeoutMs),
        headers: { accept: 'application/json' },
      });
      if (res.status === 404) {
        await res.text().catch(() => '');
        return remember(null, deps.ttlMs);
      }
      if (res.status !== 200) throw new Error(`status ${res.status}`);
      const length = Number(res.headers.get('content-length') ?? 0);
      if (length > MAX_PROXY_BYTES) throw new Error(`document of ${length} bytes is too large`);
      const text = await res.text();
      if (text.length > MAX_PROXY_BYTES) throw new Error('document is too large');
      const parsed = deps.parse(JSON.parse(text));
      if (parsed.invalid.length > 0) {
        deps.logger.debug(
          { provider, invalid: parsed.invalid.slice(0, 20) },
          `model-configs proxy (${deps.path}) sent entries that cannot be read; they are skipped`,
        );
      }
      return remember({ entries: parsed.entries, fetchedAt }, deps.ttlMs);
    } catch (error) {
      const reason =
        error instanceof Error
          ? error.name === 'TimeoutError'
            ? `no answer within ${deps.timeoutMs} ms`
            : error.message
          : String(error);
      warnOnce(provider, url, reason);
      return remember(null, deps.retryMs);
    }
  }

  return {
    name: 'proxy',
    async tableFor(provider) {
      if (deps.shouldAsk && !deps.shouldAsk(provider)) return null;
      const known = documents.get(provider);
      if (known && known.expiresAt > deps.clock.now()) return known.table;
      const pending = inFlight.get(provider);
      if (pending) return pending;
      const request = fetchDocument(provider).finally(() => inFlight.delete(provider));
      inFlight.set(provider, request);
      return request;
    },
  };
}

/** Whether a directory holds a file for the provider (the proxy is asked only about providers someone has). */
export const hasProviderFile = (dir: string | undefined, provider: string) =>
  dir !== undefined && existsSync(join(dir, `${provider}.json`));
