import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { createLoadingCache } from '../../lib/loading-cache.js';
import { AppError } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { ConfigRepository, ConfigRow } from '../../storage/repositories/configs.js';
import { parseGatewayConfig, type ConfigIssue, type GatewayConfig } from '../config/index.js';

/** The config that routes one request. */
export interface SelectedConfig {
  /** The stored config's id; null for an inline config. */
  id: string | null;
  versionId: string | null;
  config: GatewayConfig;
  /** An inline config's text (what caches key it by); null for a stored one. */
  inlineText?: string | null;
}

interface StoredEntry {
  row: Pick<ConfigRow, 'id' | 'workspace_id' | 'latest_version_id'>;
  config: GatewayConfig;
  /** What a request that picks this config gets: one object per entry, not one per request. */
  selected: SelectedConfig;
}

const STORED_TTL_MS = 5_000;
const MAX_INLINE_CACHED = 256;
const MAX_INLINE_LENGTH = 64 * 1024;

/**
 * Finds the config of a request: `x-service-config` (a slug, an id, or an inline JSON config),
 * else the API key's default config. Parsed configs are kept in memory by version, and the
 * slug → latest version lookup for a few seconds (at once on this instance's own changes), so
 * choosing a config costs a map lookup on the hot path: a config found in memory is returned as
 * it is, without a promise; only one still to be read from the database is a promise.
 */
export function createConfigSelector(deps: { configs: ConfigRepository; clock: Clock }) {
  const stored = createLoadingCache<StoredEntry>({ clock: deps.clock, ttlMs: STORED_TTL_MS });
  const parsedVersions = new Map<string, GatewayConfig>();
  // Kept as the selection itself: a request with an inline config allocates nothing here on a hit.
  const inline = new Map<string, SelectedConfig>();

  function parseInline(text: string): SelectedConfig {
    const hit = inline.get(text);
    if (hit) return hit;
    if (text.length > MAX_INLINE_LENGTH)
      throw new AppError('AB01_INVALID_CONFIG', `An inline config is at most ${MAX_INLINE_LENGTH} characters.`, {
        param: 'x-service-config',
      });
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new AppError('AB01_INVALID_CONFIG', 'x-service-config starts with "{" but is not valid JSON.', {
        param: 'x-service-config',
      });
    }
    const parsed = parseGatewayConfig(value);
    if (!parsed.ok) throw invalidConfig('x-service-config', parsed.issues);
    if (inline.size >= MAX_INLINE_CACHED) inline.delete(inline.keys().next().value!);
    const selected: SelectedConfig = Object.freeze({
      id: null,
      versionId: null,
      config: parsed.config,
      inlineText: text,
    });
    inline.set(text, selected);
    return selected;
  }

  /** The stored config, from memory while it is fresh (no promise), else read. */
  const loadStored = (organisationId: string, slugOrId: string): StoredEntry | Promise<StoredEntry> => {
    const key = `${organisationId}\u0000${slugOrId}`;
    return stored.peek(key) ?? stored.get(key, () => readStored(organisationId, slugOrId));
  };

  async function readStored(organisationId: string, slugOrId: string): Promise<StoredEntry> {
    const row = isUuid(slugOrId)
      ? await deps.configs.findById(organisationId, slugOrId.toLowerCase())
      : await deps.configs.findActiveBySlug(organisationId, slugOrId);
    if (!row || row.status !== 'active') {
      throw new AppError('CONFIG_NOT_FOUND', `No active config ${cut(slugOrId)}.`, { param: 'x-service-config' });
    }
    let config = parsedVersions.get(row.latest_version_id);
    if (!config) {
      const version = await deps.configs.findVersion(row.id, row.latest_version_id);
      const parsed = parseGatewayConfig(version ? JSON.parse(version.config) : null);
      // Saved configs were valid when saved; one that no longer is (a provider removed) says why.
      if (!parsed.ok) throw invalidConfig(`config ${row.slug}`, parsed.issues);
      config = parsed.config;
      parsedVersions.set(row.latest_version_id, config);
    }
    return {
      row: { id: row.id, workspace_id: row.workspace_id, latest_version_id: row.latest_version_id },
      config,
      selected: Object.freeze({ id: row.id, versionId: row.latest_version_id, config }),
    };
  }

  /** A workspace key uses the configs of its workspace; an admin key those of any. */
  function inWorkspace(entry: StoredEntry, name: string, principal: Principal, workspaceId: string): SelectedConfig {
    if (principal.workspaceId !== null && entry.row.workspace_id !== workspaceId) {
      throw new AppError('CONFIG_NOT_FOUND', `No active config ${cut(name)} in this key's workspace.`, {
        param: 'x-service-config',
      });
    }
    return entry.selected;
  }

  return {
    /**
     * The request's config, or null when neither the request nor its key names one. A config in
     * memory comes back as it is (or its error is thrown); a promise only when it must be read.
     */
    select(
      header: string | string[] | undefined,
      principal: Principal,
      workspaceId: string,
    ): SelectedConfig | null | Promise<SelectedConfig> {
      const given = (Array.isArray(header) ? header[0] : header)?.trim() || null;
      const keyDefault = principal.defaults?.config_id ?? null;
      if (given !== null && keyDefault !== null && principal.defaults?.allow_config_override === false) {
        throw new AppError(
          'CONFIG_OVERRIDE_FORBIDDEN',
          'This API key always uses its default config; leave out x-service-config.',
          { param: 'x-service-config' },
        );
      }
      const name = given ?? keyDefault;
      if (name === null) return null;
      if (name.startsWith('{')) return parseInline(name);
      const entry = loadStored(principal.organisationId, name);
      return entry instanceof Promise
        ? entry.then((read) => inWorkspace(read, name, principal, workspaceId))
        : inWorkspace(entry, name, principal, workspaceId);
    },

    /**
     * A stored config chosen by the operator rather than the caller (a deployment's config): it
     * applies to every workspace the deployment serves, so no workspace check.
     */
    async selectStored(organisationId: string, slugOrId: string): Promise<SelectedConfig> {
      return (await loadStored(organisationId, slugOrId)).selected;
    },

    /** After a config changes on this instance: the next request reads it again. */
    invalidate(): void {
      stored.clear();
    },
  };
}

export type ConfigSelector = ReturnType<typeof createConfigSelector>;

/** Problems named in one message; the count says how many there were. */
const MAX_ISSUES_SHOWN = 10;
/** A client's text quoted back at most this long: a 10 KB header is not echoed whole. */
const MAX_QUOTED = 200;

const cut = (text: string) =>
  text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}… (${text.length} characters)` : text;

function invalidConfig(where: string, issues: ConfigIssue[]): AppError {
  const first = issues[0]!;
  const describe = (issue: ConfigIssue) => cut(`${issue.path ? `${where}.${issue.path}` : where}: ${issue.message}`);
  const shown = issues.slice(0, MAX_ISSUES_SHOWN).map(describe);
  if (issues.length > MAX_ISSUES_SHOWN) shown.push(`and ${issues.length - MAX_ISSUES_SHOWN} more`);
  return new AppError(
    'AB01_INVALID_CONFIG',
    `Invalid config (${issues.length} problem${issues.length === 1 ? '' : 's'}): ${shown.join('; ')}`,
    {
      param: cut(first.path ? `${where}.${first.path}` : where),
    },
  );
}
