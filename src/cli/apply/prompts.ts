import { z } from 'zod';
import type { Client } from '../client/http-client.js';
import { same } from './compare.js';

/**
 * The prompt sections of an apply file: labels (by name, organisation-wide unless `workspace`
 * names one), collections, partials and prompts (by slug). A changed template or setting is
 * saved as a new version and made the default one, so that the file says what runs.
 */

const ref = z.string().min(1).max(255);
const promptSlug = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'a slug is 1–63 lower-case letters, digits and dashes');
const jsonObject = z.record(z.string(), z.unknown());

export const promptSections = {
  prompt_labels: z
    .array(
      z
        .object({
          name: z.string().min(1).max(64),
          workspace: ref.optional().describe('slug of the workspace; organisation-wide when left out'),
          description: z.string().nullable().optional(),
          color_code: z.string().nullable().optional(),
        })
        .strict(),
    )
    .default([]),
  prompt_collections: z
    .array(
      z
        .object({
          slug: promptSlug,
          name: z.string().min(1).max(255),
          workspace: ref.optional().describe('slug of the workspace; the default workspace when left out'),
          parent: promptSlug.optional().describe('slug of the parent collection'),
        })
        .strict(),
    )
    .default([]),
  prompt_partials: z
    .array(
      z
        .object({
          slug: promptSlug,
          name: z.string().min(1).max(255),
          workspace: ref.optional(),
          collection: promptSlug.optional(),
          string: z.string().min(1),
        })
        .strict(),
    )
    .default([]),
  prompts: z
    .array(
      z
        .object({
          slug: promptSlug,
          name: z.string().min(1).max(255),
          workspace: ref.optional(),
          collection: promptSlug.optional(),
          string: z.string().min(1).optional(),
          messages: z.array(jsonObject).min(1).optional().describe('a chat template, written as messages'),
          parameters: jsonObject.optional(),
          model: z.string().min(1).optional(),
          virtual_key: z.string().min(1).optional(),
          functions: z.array(z.unknown()).optional(),
          tools: z.array(z.unknown()).optional(),
          tool_choice: z.unknown().optional(),
          template_metadata: jsonObject.optional(),
          is_raw_template: z.boolean().optional(),
        })
        .strict()
        .refine((p) => (p.string === undefined) !== (p.messages === undefined), {
          message: 'a prompt has exactly one of string and messages',
          path: ['string'],
        }),
    )
    .default([]),
};

interface PromptSectionsFile {
  prompt_labels: z.infer<(typeof promptSections)['prompt_labels']>;
  prompt_collections: z.infer<(typeof promptSections)['prompt_collections']>;
  prompt_partials: z.infer<(typeof promptSections)['prompt_partials']>;
  prompts: z.infer<(typeof promptSections)['prompts']>;
}

interface LabelRow {
  id: string;
  name: string;
  workspace_id: string | null;
  description: string | null;
  color_code: string | null;
}
interface CollectionRow {
  id: string;
  slug: string;
  name: string;
  workspace_id: string;
}
/** A partial or prompt at its default version, with the highest version number it has. */
interface VersionedRow {
  id: string;
  slug: string;
  name: string;
  workspace_id: string;
  current: Record<string, unknown>;
  highest: number;
}

export interface PromptState {
  labels: LabelRow[];
  collections: CollectionRow[];
  partials: VersionedRow[];
  prompts: VersionedRow[];
}

interface PromptStep {
  kind: 'prompt_label' | 'prompt_collection' | 'prompt_partial' | 'prompt';
  name: string;
  action: 'create' | 'update' | 'unchanged';
  changes: string[];
  request?: { method: 'POST' | 'PUT'; path: string; body: Record<string, unknown> };
  then?: { method: 'POST' | 'PUT'; path: string; body: Record<string, unknown> };
}

const enc = encodeURIComponent;

/** What exists of what the file names; nothing is read for sections the file leaves out. */
export async function fetchPromptState(
  client: Client,
  file: PromptSectionsFile,
  workspaces: ReadonlyArray<{ slug: string; is_default?: boolean }>,
): Promise<PromptState> {
  const known = new Set(workspaces.map((w) => w.slug));
  const defaultWorkspace = workspaces.find((w) => w.is_default)?.slug ?? 'default';
  const labels =
    file.prompt_labels.length > 0
      ? (await client.get<{ data: LabelRow[] }>('/v1/labels', { page_size: 1000 })).data
      : [];
  const collectionWorkspaces = [...new Set(file.prompt_collections.map((c) => c.workspace ?? defaultWorkspace))].filter(
    (ws) => known.has(ws),
  );
  const collections = (
    await Promise.all(
      collectionWorkspaces.map(
        async (ws) =>
          (await client.get<{ data: CollectionRow[] }>('/v1/collections', { workspace_id: ws, page_size: 1000 })).data,
      ),
    )
  ).flat();
  const versioned = async (base: string, slug: string, numberField: string) => {
    const found = await client.get<{ data: Array<{ slug: string }> }>(base, { search: slug, page_size: 1000 });
    if (!found.data.some((row) => row.slug === slug)) return null;
    const current = await client.get<Record<string, unknown> & { id: string; name: string; workspace_id: string }>(
      `${base}/${enc(slug)}`,
    );
    const versions = await client.get<{ data: Array<Record<string, number>> }>(`${base}/${enc(slug)}/versions`);
    return {
      id: current.id,
      slug,
      name: current.name,
      workspace_id: current.workspace_id,
      current,
      highest: versions.data[0]?.[numberField] ?? 1,
    };
  };
  const partials = await Promise.all(
    file.prompt_partials.map((p) => versioned('/v1/prompts/partials', p.slug, 'version')),
  );
  const prompts = await Promise.all(file.prompts.map((p) => versioned('/v1/prompts', p.slug, 'prompt_version')));
  return {
    labels,
    collections,
    partials: partials.filter((row) => row !== null),
    prompts: prompts.filter((row) => row !== null),
  };
}

/** Steps for the prompt sections, in order: labels, collections (parents first as written), partials, prompts. */
export function planPrompts(
  file: PromptSectionsFile,
  state: PromptState,
  wsOf: (row: { workspace_id: string | null }) => string | null,
  needWorkspace: (what: string, slug: string) => string,
  defaultWorkspace: string,
  problems: string[],
): PromptStep[] {
  const steps: PromptStep[] = [];
  const unchanged = (kind: PromptStep['kind'], name: string): PromptStep => ({
    kind,
    name,
    action: 'unchanged',
    changes: [],
  });

  for (const l of file.prompt_labels) {
    const ws = l.workspace === undefined ? null : needWorkspace(`label ${l.name}`, l.workspace);
    const now = state.labels.find((row) => row.name === l.name && wsOf(row) === ws);
    const name = ws ? `${ws}/${l.name}` : l.name;
    const fields = { description: l.description, color_code: l.color_code };
    if (!now) {
      steps.push({
        kind: 'prompt_label',
        name,
        action: 'create',
        changes: Object.keys(fields).filter((k) => fields[k as keyof typeof fields] !== undefined),
        request: {
          method: 'POST',
          path: '/v1/labels',
          body: defined({ name: l.name, workspace_id: ws ?? undefined, ...fields }),
        },
      });
      continue;
    }
    const changes = (['description', 'color_code'] as const).filter(
      (k) => fields[k] !== undefined && fields[k] !== now[k],
    );
    steps.push(
      changes.length === 0
        ? unchanged('prompt_label', name)
        : {
            kind: 'prompt_label',
            name,
            action: 'update',
            changes,
            request: { method: 'PUT', path: `/v1/labels/${now.id}`, body: defined(pickFields(fields, changes)) },
          },
    );
  }

  for (const c of file.prompt_collections) {
    const ws = needWorkspace(`collection ${c.slug}`, c.workspace ?? defaultWorkspace);
    const now = state.collections.find((row) => row.slug === c.slug);
    if (now && wsOf(now) !== ws)
      problems.push(`collection ${c.slug}: it is in ${wsOf(now)} on the server and cannot move`);
    if (!now) {
      steps.push({
        kind: 'prompt_collection',
        name: c.slug,
        action: 'create',
        changes: ['name', ...(c.parent ? ['parent'] : [])],
        request: {
          method: 'POST',
          path: '/v1/collections',
          body: defined({ slug: c.slug, name: c.name, workspace_id: ws, parent_collection_id: c.parent }),
        },
      });
    } else if (now.name !== c.name) {
      steps.push({
        kind: 'prompt_collection',
        name: c.slug,
        action: 'update',
        changes: ['name'],
        request: { method: 'PUT', path: `/v1/collections/${enc(c.slug)}`, body: { name: c.name } },
      });
    } else steps.push(unchanged('prompt_collection', c.slug));
  }

  for (const p of file.prompt_partials) {
    const ws = needWorkspace(`partial ${p.slug}`, p.workspace ?? defaultWorkspace);
    const now = state.partials.find((row) => row.slug === p.slug);
    const path = `/v1/prompts/partials/${enc(p.slug)}`;
    steps.push(
      versionedStep('prompt_partial', p.slug, now, ws, wsOf, problems, {
        create: {
          method: 'POST',
          path: '/v1/prompts/partials',
          body: defined({
            slug: p.slug,
            name: p.name,
            string: p.string,
            workspace_id: ws,
            collection_id: p.collection,
          }),
        },
        name: p.name,
        content: { string: p.string },
        update: (changes) => ({
          method: 'PUT',
          path,
          body: {
            ...(changes.includes('name') ? { name: p.name } : {}),
            ...(changes.includes('string') ? { string: p.string } : {}),
          },
        }),
        publish: path,
      }),
    );
  }

  for (const p of file.prompts) {
    const ws = needWorkspace(`prompt ${p.slug}`, p.workspace ?? defaultWorkspace);
    const now = state.prompts.find((row) => row.slug === p.slug);
    const path = `/v1/prompts/${enc(p.slug)}`;
    // What a version holds; what the file leaves out is unset, as the server shows it.
    const content = {
      string: p.string ?? JSON.stringify(p.messages),
      parameters: p.parameters ?? null,
      model: p.model ?? null,
      virtual_key: p.virtual_key ?? null,
      functions: p.functions ?? null,
      tools: p.tools ?? null,
      tool_choice: p.tool_choice ?? null,
      template_metadata: p.template_metadata ?? null,
      is_raw_template: p.is_raw_template ?? false,
    };
    steps.push(
      versionedStep('prompt', p.slug, now, ws, wsOf, problems, {
        create: {
          method: 'POST',
          path: '/v1/prompts',
          body: defined({ slug: p.slug, name: p.name, workspace_id: ws, collection_id: p.collection, ...content }),
        },
        name: p.name,
        content,
        update: (changes) => ({
          method: 'PUT',
          path,
          body: changes.some((c) => c !== 'name') ? { name: p.name, ...content } : { name: p.name },
        }),
        publish: path,
      }),
    );
  }
  return steps;
}

/** Create, rename, or a new version made the default one (its number is the highest so far plus one). */
function versionedStep(
  kind: 'prompt' | 'prompt_partial',
  slug: string,
  now: VersionedRow | undefined,
  ws: string,
  wsOf: (row: { workspace_id: string | null }) => string | null,
  problems: string[],
  how: {
    create: NonNullable<PromptStep['request']>;
    name: string;
    content: Record<string, unknown>;
    update: (changes: string[]) => NonNullable<PromptStep['request']>;
    publish: string;
  },
): PromptStep {
  if (!now) return { kind, name: slug, action: 'create', changes: Object.keys(how.content), request: how.create };
  if (wsOf(now) !== ws)
    problems.push(`${kind.replace('_', ' ')} ${slug}: it is in ${wsOf(now)} on the server and cannot move`);
  const changes = [
    ...(now.name === how.name ? [] : ['name']),
    ...Object.keys(how.content).filter((key) => !same(now.current[key] ?? null, how.content[key])),
  ];
  if (changes.length === 0) return { kind, name: slug, action: 'unchanged', changes };
  const versioned = changes.some((c) => c !== 'name');
  return {
    kind,
    name: slug,
    action: 'update',
    changes,
    request: how.update(changes),
    ...(versioned
      ? { then: { method: 'PUT', path: `${how.publish}/makeDefault`, body: { version: now.highest + 1 } } }
      : {}),
  };
}

function defined(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}

function pickFields(value: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((key) => [key, value[key]]));
}
