import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid } from '../../lib/errors.js';
import { isUuid, newId } from '../../lib/ids.js';
import type { PromptLookup } from '../../prompts/index.js';
import type { ConfigRepository } from '../../storage/repositories/configs.js';
import type { CollectionRow, LabelRow, PromptRepository, PromptRow } from '../../storage/repositories/prompts.js';
import type { WorkspaceRepository, WorkspaceRow } from '../../storage/repositories/workspaces.js';
import { assertWorkspaceReachable, resolveWorkspace } from '../shared/workspace-access.js';

/** The security-settings checks prompts need (admin/settings implements them). */
export interface PromptAccessSettings {
  canView(principal: Principal, area: 'prompts'): Promise<boolean>;
  canWrite(principal: Principal, area: 'prompts'): Promise<boolean>;
}

export interface PromptDeps {
  repo: PromptRepository;
  workspaces: WorkspaceRepository;
  configs: ConfigRepository;
  lookup: PromptLookup;
  settings: PromptAccessSettings;
  clock: Clock;
}

/** The labels every organisation has; they cannot be changed or deleted. */
export const UNIVERSAL_LABELS = ['production', 'staging', 'development'] as const;

/**
 * What the prompt services share: the security-settings checks, collections (a workspace's
 * default one is made when first needed) and the universal labels (made on first use).
 */
export function createPromptContext(deps: PromptDeps) {
  const now = () => new Date(deps.clock.now()).toISOString();

  async function assertView(principal: Principal): Promise<void> {
    if (!(await deps.settings.canView(principal, 'prompts')))
      throw new AppError(
        'ROLE_NOT_ALLOWED',
        `The security settings of this workspace do not let ${principal.workspaceRole}s see prompts (${principal.workspaceRole}sViewPrompts).`,
      );
  }

  async function assertWrite(principal: Principal): Promise<void> {
    if (!(await deps.settings.canWrite(principal, 'prompts')))
      throw new AppError(
        'ROLE_NOT_ALLOWED',
        `The security settings of this workspace do not let ${principal.workspaceRole}s create or change prompts (${principal.workspaceRole}sWritePrompts).`,
      );
  }

  async function defaultCollection(workspace: WorkspaceRow): Promise<CollectionRow> {
    const existing = await deps.repo.findDefaultCollection(workspace.id);
    if (existing) return existing;
    const stamp = now();
    return deps.repo.ensureDefaultCollection({
      id: newId(),
      organisation_id: workspace.organisation_id,
      workspace_id: workspace.id,
      slug: `default-${workspace.slug}`.slice(0, 63),
      name: 'Default',
      parent_collection_id: null,
      is_default: 1,
      status: 'active',
      created_at: stamp,
      last_updated_at: stamp,
    });
  }

  /** An active collection by id or slug that the caller reaches: 404 otherwise, 403 across the wall. */
  async function collection(principal: Principal, ref: string, param: string): Promise<CollectionRow> {
    const row = isUuid(ref)
      ? await deps.repo.findCollection(principal.organisationId, ref.toLowerCase())
      : await deps.repo.findActiveCollectionBySlug(principal.organisationId, ref);
    if (!row || row.status !== 'active') throw new AppError('NOT_FOUND', `Collection ${ref} not found.`, { param });
    assertWorkspaceReachable(principal, row.workspace_id);
    return row;
  }

  /**
   * Where a new prompt or partial goes: the collection named (its workspace), else the default
   * collection of the workspace named, the key's, or (admin keys) the organisation's default one.
   */
  async function place(
    principal: Principal,
    body: { collection_id?: string | undefined; workspace_id?: string | undefined },
  ): Promise<{ workspaceId: string; collectionId: string }> {
    const workspace =
      (await resolveWorkspace(deps.workspaces, principal, body.workspace_id, { required: false })) ??
      (body.collection_id === undefined ? await deps.workspaces.findDefault(principal.organisationId) : null);
    if (body.collection_id !== undefined) {
      const found = await collection(principal, body.collection_id, 'collection_id');
      if (workspace && workspace.id !== found.workspace_id)
        throw invalid('collection_id', 'The collection belongs to another workspace than workspace_id.');
      return { workspaceId: found.workspace_id, collectionId: found.id };
    }
    if (!workspace) throw invalid('workspace_id', 'workspace_id is required.');
    return { workspaceId: workspace.id, collectionId: (await defaultCollection(workspace)).id };
  }

  const withUniversalLabels = new Set<string>();
  async function ensureUniversalLabels(organisationId: string): Promise<void> {
    if (withUniversalLabels.has(organisationId)) return;
    const stamp = now();
    const rows: LabelRow[] = UNIVERSAL_LABELS.map((name) => ({
      id: newId(),
      organisation_id: organisationId,
      workspace_id: null,
      name,
      description: null,
      color_code: null,
      is_universal: 1,
      status: 'active',
      created_at: stamp,
      last_updated_at: stamp,
    }));
    await deps.repo.ensureUniversalLabels(rows);
    withUniversalLabels.add(organisationId);
  }

  /** A label (id or name) the prompt's workspace sees: an organisation label or one of the workspace. */
  async function visibleLabel(principal: Principal, row: PromptRow, ref: string): Promise<string> {
    await ensureUniversalLabels(principal.organisationId);
    const named = isUuid(ref)
      ? []
      : await deps.repo.findVisibleLabelsByName(principal.organisationId, row.workspace_id, ref);
    const label = isUuid(ref)
      ? await deps.repo.findLabel(principal.organisationId, ref.toLowerCase())
      : (named.find((candidate) => candidate.workspace_id !== null) ?? named[0]);
    if (!label || label.status !== 'active' || (label.workspace_id !== null && label.workspace_id !== row.workspace_id))
      throw new AppError('NOT_FOUND', `Label ${ref} not found in the prompt's workspace.`, { param: 'label_id' });
    return label.id;
  }

  return { now, assertView, assertWrite, defaultCollection, collection, place, ensureUniversalLabels, visibleLabel };
}

export type PromptContext = ReturnType<typeof createPromptContext>;
