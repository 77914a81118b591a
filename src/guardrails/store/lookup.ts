import type { Clock } from '../../lib/clock.js';
import { isUuid } from '../../lib/ids.js';
import type { GuardrailRepository, GuardrailRow } from '../../storage/repositories/guardrails.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import { builtInCheckId, type BuiltInCheckId } from '../registry.js';
import { withOverrides, type GuardrailActions } from './actions.js';
import type { GuardrailCheck } from './checks.js';
import { guardrailUsesOf, type GuardrailFields, type GuardrailUse, type NodeGuardrails } from './config-entries.js';
import { parseWorkspaceDefaults } from './workspace-defaults.js';

/** A check ready to run: `check` is the built-in implementation its id (or alias) stands for. */
export interface ResolvedCheck extends GuardrailCheck {
  check: BuiltInCheckId;
}

/** One guardrail to run, stored or inline, with the actions that apply to it here. */
export interface ResolvedGuardrail {
  /** The stored guardrail's id and slug; null for inline guardrails. */
  id: string | null;
  slug: string | null;
  version_id: string | null;
  version: number | null;
  /** The inline guardrail's own `id`, or the stored guardrail's name. */
  name: string | null;
  /** Enabled checks only, in their order. */
  checks: ResolvedCheck[];
  actions: GuardrailActions;
  /** Where it was named: `workspace_defaults.input_guardrails[0]`, `targets[1].before_request_hooks[0]`, … */
  source: string;
}

export interface RequestGuardrails {
  before: ResolvedGuardrail[];
  after: ResolvedGuardrail[];
  /**
   * References that name nothing the workspace can use (deleted since the config was saved,
   * another workspace's, or a typo in an inline x-service-config): the caller decides (the
   * gateway refuses the request rather than run it unguarded).
   */
  missing: Array<{ ref: string; source: string }>;
}

/** What the gateway asks of guardrails on the hot path. */
export interface GuardrailLookup {
  /**
   * The guardrails of one request in a workspace: the workspace defaults first, then those of
   * `node` (the config node the request runs, with whatever it inherits already merged in).
   * Without a promise when nothing has to be loaded (cached workspace defaults, inline guardrails).
   */
  forRequest(input: {
    organisationId: string;
    workspaceId: string;
    node?: GuardrailFields;
    /** False for a config target's own guardrails (the workspace defaults ran at the request's start). */
    withWorkspaceDefaults?: boolean;
  }): RequestGuardrails | Promise<RequestGuardrails>;
  /** Forgets everything cached; called after any change to guardrails or workspace defaults. */
  invalidate(): void;
}

/** A cached load, with its result once it has one (read without a promise). */
interface Cached<T> {
  at: number;
  value: Promise<T>;
  loaded: boolean;
  result: T | undefined;
}

/** No guardrails (only read). */
const NO_USES: NodeGuardrails = { before: [], after: [] };

interface Stored {
  row: GuardrailRow;
  version: { id: string; version: number; checks: GuardrailCheck[]; actions: GuardrailActions };
}

/**
 * The guardrail lookup with a cache: stored guardrails by reference and workspace defaults are
 * kept for `ttlMs` (other instances' changes are seen within it) and dropped at once by
 * `invalidate` (this instance's changes).
 */
export function createGuardrailLookup(deps: {
  guardrails: GuardrailRepository;
  workspaces: WorkspaceRepository;
  clock: Clock;
  ttlMs?: number;
}): GuardrailLookup {
  const ttl = deps.ttlMs ?? 30_000;
  const stored = new Map<string, Cached<Stored | null>>();
  const defaults = new Map<string, Cached<NodeGuardrails>>();

  function cachedEntry<T>(map: Map<string, Cached<T>>, key: string, load: () => Promise<T>): Cached<T> {
    const now = deps.clock.now();
    const hit = map.get(key);
    if (hit && now - hit.at < ttl) return hit;
    const value = load();
    const entry: Cached<T> = { at: now, value, loaded: false, result: undefined };
    map.set(key, entry);
    value.then(
      (result) => {
        entry.loaded = true;
        entry.result = result;
      },
      // A failed load is not remembered.
      () => map.get(key) === entry && map.delete(key),
    );
    return entry;
  }

  const cached = <T>(map: Map<string, Cached<T>>, key: string, load: () => Promise<T>): Promise<T> =>
    cachedEntry(map, key, load).value;

  /** The workspace's default guardrails, without a promise once they are loaded. */
  function workspaceDefaults(workspaceId: string): NodeGuardrails | Promise<NodeGuardrails> {
    const entry = cachedEntry(defaults, workspaceId, async () => {
      const row = await deps.workspaces.findById(workspaceId);
      return parseWorkspaceDefaults(row?.defaults ?? null);
    });
    return entry.loaded ? (entry.result as NodeGuardrails) : entry.value;
  }

  async function loadStored(
    organisationId: string,
    ref: string,
    versionId: string | undefined,
  ): Promise<Stored | null> {
    const row = isUuid(ref)
      ? await deps.guardrails.findById(organisationId, ref.toLowerCase())
      : await deps.guardrails.findBySlug(organisationId, ref);
    if (!row || row.status !== 'active') return null;
    const version = await deps.guardrails.findVersion(row.id, versionId ?? row.latest_version_id);
    if (!version) return null;
    return {
      row,
      version: {
        id: version.id,
        version: version.version,
        checks: JSON.parse(version.checks) as GuardrailCheck[],
        actions: JSON.parse(version.actions) as GuardrailActions,
      },
    };
  }

  async function resolve(
    organisationId: string,
    workspaceId: string,
    uses: GuardrailUse[],
    prefix: string,
    missing: RequestGuardrails['missing'],
  ) {
    const out: ResolvedGuardrail[] = [];
    for (const use of uses) {
      if (use.kind === 'inline') {
        out.push(inlineGuardrail(use, prefix));
        continue;
      }
      const source = prefix + use.path;
      const key = `${organisationId}\u0000${use.ref}\u0000${use.versionId ?? ''}`;
      const found = await cached(stored, key, () => loadStored(organisationId, use.ref, use.versionId));
      // Another workspace's guardrail is answered like a missing one: names do not cross walls.
      if (!found || (found.row.workspace_id !== null && found.row.workspace_id !== workspaceId)) {
        missing.push({ ref: use.ref, source });
        continue;
      }
      out.push({
        id: found.row.id,
        slug: found.row.slug,
        version_id: found.version.id,
        version: found.version.version,
        name: found.row.name,
        checks: runnable(found.version.checks),
        actions: withOverrides(found.version.actions, use.overrides),
        source,
      });
    }
    return out;
  }

  function forUses(
    organisationId: string,
    workspaceId: string,
    workspace: NodeGuardrails,
    node: GuardrailFields | undefined,
  ): RequestGuardrails | Promise<RequestGuardrails> {
    const own = node ? guardrailUsesOf(node) : NO_USES;
    // Inline guardrails only (most requests): nothing to load, so no promise at all.
    if (allInline(workspace.before, workspace.after, own.before, own.after))
      return {
        before: [...inlineGuardrails(workspace.before, 'workspace_defaults.'), ...inlineGuardrails(own.before, '')],
        after: [...inlineGuardrails(workspace.after, 'workspace_defaults.'), ...inlineGuardrails(own.after, '')],
        missing: [],
      };
    return withStored(organisationId, workspaceId, workspace, own);
  }

  async function withStored(
    organisationId: string,
    workspaceId: string,
    workspace: NodeGuardrails,
    own: NodeGuardrails,
  ): Promise<RequestGuardrails> {
    const missing: RequestGuardrails['missing'] = [];
    const before = [
      ...(await resolve(organisationId, workspaceId, workspace.before, 'workspace_defaults.', missing)),
      ...(await resolve(organisationId, workspaceId, own.before, '', missing)),
    ];
    const after = [
      ...(await resolve(organisationId, workspaceId, workspace.after, 'workspace_defaults.', missing)),
      ...(await resolve(organisationId, workspaceId, own.after, '', missing)),
    ];
    return { before, after, missing };
  }

  return {
    forRequest({ organisationId, workspaceId, node, withWorkspaceDefaults = true }) {
      const workspace = withWorkspaceDefaults ? workspaceDefaults(workspaceId) : NO_USES;
      if (workspace instanceof Promise)
        return workspace.then((loaded) => forUses(organisationId, workspaceId, loaded, node));
      return forUses(organisationId, workspaceId, workspace, node);
    },
    invalidate() {
      stored.clear();
      defaults.clear();
    },
  };
}

/** Per checks list (kept with its config or cached version): worked out once, not per request. */
const runnableChecks = new WeakMap<GuardrailCheck[], ResolvedCheck[]>();

function runnable(checks: GuardrailCheck[]): ResolvedCheck[] {
  let found = runnableChecks.get(checks);
  if (!found) {
    found = checks.flatMap((check) => {
      const id = builtInCheckId(check.id);
      return check.is_enabled && id !== null ? [{ ...check, check: id }] : [];
    });
    runnableChecks.set(checks, found);
  }
  return found;
}

type InlineUse = Extract<GuardrailUse, { kind: 'inline' }>;

/**
 * An inline guardrail as it runs, made once per use (kept with its parsed config or cached
 * workspace defaults) and place, and shared by the requests that use it: nothing changes it.
 */
const inlineByUse = new WeakMap<InlineUse, Map<string, ResolvedGuardrail>>();

function inlineGuardrail(use: InlineUse, prefix: string): ResolvedGuardrail {
  let byPrefix = inlineByUse.get(use);
  if (!byPrefix) inlineByUse.set(use, (byPrefix = new Map<string, ResolvedGuardrail>()));
  let resolved = byPrefix.get(prefix);
  if (!resolved)
    byPrefix.set(
      prefix,
      (resolved = {
        id: null,
        slug: null,
        version_id: null,
        version: null,
        name: use.label ?? null,
        checks: runnable(use.checks),
        actions: use.actions,
        source: prefix + use.path,
      }),
    );
  return resolved;
}

function inlineGuardrails(uses: GuardrailUse[], prefix: string): ResolvedGuardrail[] {
  return uses.length === 0 ? [] : uses.map((use) => inlineGuardrail(use as InlineUse, prefix));
}

function allInline(...lists: GuardrailUse[][]): boolean {
  for (const list of lists) for (const use of list) if (use.kind !== 'inline') return false;
  return true;
}
