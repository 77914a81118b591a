import type { Principal } from '../../auth/principal.js';
import { AppError, invalid } from '../../lib/errors.js';
import { isUuid, newId, slugify } from '../../lib/ids.js';
import { contentOf, parsedTemplates, partialsOf, splitRef } from '../../prompts/index.js';
import type { PromptRow, PromptVersionRow } from '../../storage/repositories/prompts.js';
import type { PromptContext, PromptDeps } from './context.js';
import { createTemplateLifecycle } from './template-lifecycle.js';
import type {
  CreatePromptBody,
  ListPromptsQuery,
  PromptObject,
  PromptSummary,
  PromptVersionSummary,
  UpdatePromptBody,
} from './schemas.js';

/** The fields that make a version; a change to any of them saves a new version. */
const VERSION_FIELDS = [
  'string',
  'parameters',
  'model',
  'virtual_key',
  'config_id',
  'functions',
  'tools',
  'tool_choice',
  'template_metadata',
  'prompt_metadata',
  'is_raw_template',
  'version_description',
] as const;

type VersionInput = Partial<Pick<UpdatePromptBody, (typeof VERSION_FIELDS)[number]>>;
type VersionContent = Omit<
  PromptVersionRow,
  'id' | 'prompt_id' | 'version' | 'label_id' | 'created_at' | 'created_by_key_id'
>;

const text = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

/**
 * Prompts and their versions. A change to the template or its settings saves a new version;
 * the default version (the one runs use unless they name another) changes only by makeDefault.
 */
export function createPromptService(deps: PromptDeps, ctx: PromptContext) {
  const { repo, lookup } = deps;

  /** Checks a version's templates (they parse, their partials exist in the workspace) and its config. */
  async function checkedContent(
    principal: Principal,
    workspaceId: string,
    input: VersionInput,
    base: VersionContent | null,
  ): Promise<VersionContent> {
    const pick = <K extends keyof VersionContent>(key: K, given: VersionContent[K] | undefined): VersionContent[K] =>
      given !== undefined ? given : base ? base[key] : (null as VersionContent[K]);
    const metadata = input.template_metadata !== undefined ? input.template_metadata : input.prompt_metadata;
    const string = input.string ?? base?.string;
    if (string === undefined)
      throw invalid('string', 'string is required (or send patch: true to keep the latest one).');
    const content: VersionContent = {
      string,
      parameters: pick('parameters', input.parameters === undefined ? undefined : text(input.parameters)),
      model: pick('model', input.model),
      virtual_key: pick('virtual_key', input.virtual_key),
      config_id: pick('config_id', input.config_id),
      functions: pick('functions', input.functions === undefined ? undefined : text(input.functions)),
      tools: pick('tools', input.tools === undefined ? undefined : text(input.tools)),
      tool_choice: pick('tool_choice', input.tool_choice === undefined ? undefined : text(input.tool_choice)),
      template_metadata: pick('template_metadata', metadata === undefined ? undefined : text(metadata)),
      is_raw_template:
        input.is_raw_template !== undefined ? (input.is_raw_template ? 1 : 0) : (base?.is_raw_template ?? 0),
      description: input.version_description !== undefined ? input.version_description : null,
      status: 'active',
    };
    const templates = parsedTemplates({ string: content.string, is_raw_template: content.is_raw_template === 1 });
    await lookup.partials(principal.organisationId, workspaceId, partialsOf(templates));
    if (content.config_id !== null) content.config_id = await configId(principal, workspaceId, content.config_id);
    return content;
  }

  /** A stored config of the prompt's workspace, by id or slug: its id. */
  async function configId(principal: Principal, workspaceId: string, ref: string): Promise<string> {
    const config = isUuid(ref)
      ? await deps.configs.findById(principal.organisationId, ref.toLowerCase())
      : await deps.configs.findActiveBySlug(principal.organisationId, ref);
    if (!config || config.status !== 'active' || config.workspace_id !== workspaceId)
      throw new AppError('NOT_FOUND', `Config ${ref} not found in the prompt's workspace.`, { param: 'config_id' });
    return config.id;
  }

  const lifecycle = createTemplateLifecycle(deps, ctx, 'prompt');
  const { find, writable } = lifecycle;

  return {
    async list(principal: Principal, query: ListPromptsQuery) {
      const { total, rows } = await lifecycle.list(principal, query);
      return { total, data: rows.map((row) => toSummary(row, row.model)) };
    },

    async create(principal: Principal, body: CreatePromptBody) {
      await ctx.assertWrite(principal);
      const placement = await ctx.place(principal, body);
      const content = await checkedContent(principal, placement.workspaceId, body, null);
      const slug = body.slug ?? slugify(body.name);
      await lifecycle.assertSlugFree(principal.organisationId, slug);
      const version: PromptVersionRow = {
        ...content,
        id: newId(),
        prompt_id: newId(),
        version: 1,
        label_id: null,
        created_at: ctx.now(),
        created_by_key_id: principal.keyId,
      };
      const row = await lifecycle.insert(principal, placement, { slug, name: body.name }, version);
      return { row, version };
    },

    /** `promptId` may name a version: `{id}@{version|latest|label}`; without one, the default version. */
    async get(principal: Principal, ref: string): Promise<PromptObject> {
      await ctx.assertView(principal);
      const { idOrSlug, selector } = splitRef(ref);
      const row = await find(principal, idOrSlug);
      return toObject(row, await lookup.version(row, selector, 'promptId'));
    },

    async update(principal: Principal, ref: string, body: UpdatePromptBody) {
      const row = await writable(principal, ref);
      const patch: Partial<PromptRow> = { last_updated_at: ctx.now() };
      if (body.name !== undefined) patch.name = body.name;
      if (body.collection_id !== undefined) {
        const target = await ctx.collection(principal, body.collection_id, 'collection_id');
        if (target.workspace_id !== row.workspace_id)
          throw invalid('collection_id', "The collection belongs to another workspace than the prompt's.");
        patch.collection_id = target.id;
      }
      const changesVersion = VERSION_FIELDS.some((field) => body[field] !== undefined);
      if (!changesVersion) {
        await repo.update(row.id, patch);
        return { row: { ...row, ...patch }, versionId: row.default_version_id };
      }
      const latest = body.patch ? await repo.latestVersion(row.id) : undefined;
      const content = await checkedContent(principal, row.workspace_id, body, latest ?? null);
      const version = await repo.addVersion(
        row.id,
        {
          ...content,
          id: newId(),
          label_id: null,
          created_at: patch.last_updated_at!,
          created_by_key_id: principal.keyId,
        },
        patch,
      );
      return { row: { ...row, ...patch }, versionId: version.id };
    },

    archive: lifecycle.archive,

    async listVersions(principal: Principal, ref: string): Promise<PromptVersionSummary[]> {
      await ctx.assertView(principal);
      const row = await find(principal, ref);
      return (await repo.listVersions(row.id)).map((version) => toVersionSummary(row, version));
    },

    async getVersion(principal: Principal, ref: string, versionRef: string): Promise<PromptObject> {
      await ctx.assertView(principal);
      const row = await find(principal, ref);
      return toObject(row, await lookup.version(row, versionRef, 'versionId'));
    },

    setVersionLabel: lifecycle.setVersionLabel,
    makeDefault: lifecycle.makeDefault,
  };
}

export type PromptService = ReturnType<typeof createPromptService>;

function toSummary(row: PromptRow, model: string | null): PromptSummary {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    collection_id: row.collection_id,
    workspace_id: row.workspace_id,
    model,
    status: row.status,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    object: 'prompt',
  };
}

export function toObject(row: PromptRow, version: PromptVersionRow): PromptObject {
  const content = contentOf(version);
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    collection_id: row.collection_id,
    workspace_id: row.workspace_id,
    string: version.string,
    parameters: content.parameters,
    prompt_version: version.version,
    prompt_version_id: version.id,
    prompt_version_status: version.status,
    prompt_version_description: version.description,
    prompt_version_label_id: version.label_id,
    is_default_version: version.id === row.default_version_id,
    virtual_key: version.virtual_key,
    config_id: version.config_id,
    model: version.model,
    functions: content.functions,
    tools: content.tools,
    tool_choice: content.tool_choice ?? null,
    template_metadata:
      version.template_metadata === null ? null : (JSON.parse(version.template_metadata) as Record<string, unknown>),
    is_raw_template: version.is_raw_template === 1,
    status: row.status,
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    object: 'prompt',
  };
}

function toVersionSummary(row: PromptRow, version: PromptVersionRow): PromptVersionSummary {
  return {
    id: version.id,
    prompt_id: row.id,
    prompt_template: version.string,
    prompt_version: version.version,
    prompt_description: version.description,
    label_id: version.label_id,
    is_default: version.id === row.default_version_id,
    created_at: version.created_at,
    status: version.status,
    object: 'prompt',
  };
}
