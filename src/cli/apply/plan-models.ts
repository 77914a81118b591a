import { covers, same } from './compare.js';
import type { ConfigRow, Resource, Step } from './plan-types.js';
import type { ApplyFile } from './schema.js';

/** An integration's list as `GET /v1/integrations/{slug}/models` shows it. */
export interface IntegrationModelsRow {
  allow_all_models: boolean;
  models: Array<{ slug: string; [field: string]: unknown }>;
}

export interface AliasRow extends Resource {
  name: string;
  model: string | null;
  config_id: string | null;
  workspace_id: string | null;
}

/** What the model steps read of the server, beside the rest of `CurrentState`. */
export interface CatalogueState {
  /** By integration slug: only integrations the file gives models or allow_all_models. */
  integrationModels?: Record<string, IntegrationModelsRow>;
  aliases?: AliasRow[];
}

const enc = encodeURIComponent;

/**
 * Steps for integration model lists and aliases, after integrations, providers and configs
 * exist. A model list is sent whole (the models the file names, and allow_all_models) when any
 * of it differs; models the server lists and the file does not stay. Aliases are known by name
 * within their workspace, or organisation-wide without one.
 */
export function planCatalogue(
  file: ApplyFile,
  current: CatalogueState & { configs?: ConfigRow[]; workspaceSlugOf: (id: string | null) => string | null },
  problems: string[],
): { modelSteps: Step[]; aliasSteps: Step[] } {
  const modelSteps: Step[] = [];
  for (const i of file.integrations) {
    if (i.models === undefined && i.allow_all_models === undefined) continue;
    const now = current.integrationModels?.[i.slug];
    const desired = i.models ?? [];
    const changes: string[] = [];
    if (i.allow_all_models !== undefined && now?.allow_all_models !== i.allow_all_models)
      changes.push('allow_all_models');
    for (const model of desired) {
      const listed = now?.models.find((m) => m.slug === model.slug);
      if (!listed || !covers(listed, model)) changes.push(`models.${model.slug}`);
    }
    const request = {
      method: 'PUT' as const,
      path: `/v1/integrations/${enc(i.slug)}/models`,
      body: { models: desired, ...(i.allow_all_models !== undefined ? { allow_all_models: i.allow_all_models } : {}) },
    };
    if (!now) modelSteps.push({ kind: 'integration_models', name: i.slug, action: 'create', changes, request });
    else if (changes.length === 0)
      modelSteps.push({ kind: 'integration_models', name: i.slug, action: 'unchanged', changes });
    else modelSteps.push({ kind: 'integration_models', name: i.slug, action: 'update', changes, request });
  }

  const aliasSteps: Step[] = [];
  const configId = (slug: string) => current.configs?.find((c) => c.slug === slug && c.status === 'active')?.id;
  for (const a of file.aliases) {
    const ws = a.workspace ?? null;
    const name = `${ws ?? 'organisation'}/${a.name}`;
    if (a.config !== undefined && ws === null)
      problems.push(`alias ${a.name}: an organisation-wide alias names a model; give it a workspace to name a config`);
    const matches = (current.aliases ?? []).filter(
      (row) => row.name === a.name && current.workspaceSlugOf(row.workspace_id) === ws,
    );
    const now = matches[0];
    const target = a.model !== undefined ? { model: a.model } : { config_id: a.config! };
    const fields = { ...target, ...(a.description !== undefined ? { description: a.description } : {}) };
    if (!now) {
      aliasSteps.push({
        kind: 'alias',
        name,
        action: 'create',
        changes: Object.keys(fields),
        request: { method: 'POST', path: '/v1/model-aliases', body: { name: a.name, workspace_id: ws, ...fields } },
      });
      continue;
    }
    const changes: string[] = [];
    if (a.model !== undefined && now.model !== a.model) changes.push('model');
    if (a.config !== undefined && now.config_id !== configId(a.config)) changes.push('config');
    if (a.description !== undefined && !same(now.description ?? null, a.description)) changes.push('description');
    aliasSteps.push(
      changes.length === 0
        ? { kind: 'alias', name, action: 'unchanged', changes }
        : {
            kind: 'alias',
            name,
            action: 'update',
            changes,
            request: { method: 'PUT', path: `/v1/model-aliases/${now.id}`, body: fields },
          },
    );
  }
  return { modelSteps, aliasSteps };
}
