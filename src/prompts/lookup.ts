import { AppError, invalid, notFound } from '../lib/errors.js';
import { isUuid } from '../lib/ids.js';
import type { PromptKind, PromptRepository, PromptRow, PromptVersionRow } from '../storage/repositories/prompts.js';
import { parsedTemplates, partialsOf, renderPrompt, type PromptContent, type RenderedPrompt } from './render.js';
import { MAX_PARTIAL_DEPTH, type PartialRef } from './template.js';

/** Who is asking: an organisation, and the workspace its key is pinned to (null for admin keys). */
export interface PromptCaller {
  organisationId: string;
  workspaceId: string | null;
}

const WHAT: Record<PromptKind, string> = { prompt: 'Prompt', partial: 'Prompt partial' };

/** `{id}@{selector}`: an id or slug, then a version number, `latest`, a label name or a version id. */
export function splitRef(ref: string): { idOrSlug: string; selector: string | null } {
  const at = ref.indexOf('@');
  return at < 0 ? { idOrSlug: ref, selector: null } : { idOrSlug: ref.slice(0, at), selector: ref.slice(at + 1) };
}

/** A stored version's content with its JSON fields read. */
export function contentOf(version: PromptVersionRow): PromptContent {
  const json = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));
  return {
    string: version.string,
    parameters: json<Record<string, unknown>>(version.parameters),
    model: version.model,
    functions: json<unknown[]>(version.functions),
    tools: json<unknown[]>(version.tools),
    tool_choice: json<unknown>(version.tool_choice),
    is_raw_template: version.is_raw_template === 1,
  };
}

export interface PromptRun {
  prompt: PromptRow;
  version: PromptVersionRow;
  /** The label chosen (`{id}@production`), else the label the version carries; null when none. */
  label: string | null;
  rendered: RenderedPrompt;
}

/**
 * Finding prompts, partials and their versions for a caller, within its tenant walls; used by
 * the admin routes and by the gateway's render and completions routes alike.
 */
export function createPromptLookup(deps: { prompts: PromptRepository }) {
  const repo = deps.prompts;

  /** By id or slug (the active one first): 404 when unknown, 403 across a workspace key's wall. */
  async function find(caller: PromptCaller, kind: PromptKind, idOrSlug: string, param?: string): Promise<PromptRow> {
    const row = isUuid(idOrSlug)
      ? await repo.findById(caller.organisationId, kind, idOrSlug.toLowerCase())
      : await repo.findBySlug(caller.organisationId, kind, idOrSlug);
    if (!row) throw notFound(WHAT[kind], param ?? null);
    if (caller.workspaceId !== null && caller.workspaceId !== row.workspace_id)
      throw new AppError('WORKSPACE_FORBIDDEN', 'This workspace key cannot reach another workspace.');
    return row;
  }

  /** The label names the workspace sees, resolved to one label id (a workspace label wins over an organisation one). */
  async function labelId(organisationId: string, workspaceId: string, name: string): Promise<string | null> {
    const labels = await repo.findVisibleLabelsByName(organisationId, workspaceId, name);
    const own = labels.find((label) => label.workspace_id === workspaceId);
    return (own ?? labels[0])?.id ?? null;
  }

  /**
   * The version a selector names: none → the default; `3` → version 3; `latest` → the newest;
   * a version id; else a label name the prompt's workspace sees.
   */
  async function version(row: PromptRow, selector: string | null, param = 'version'): Promise<PromptVersionRow> {
    let found: PromptVersionRow | undefined;
    if (selector === null || selector === 'default') found = await repo.findVersion(row.id, row.default_version_id);
    else if (/^[1-9][0-9]{0,8}$/.test(selector)) found = await repo.findVersionNumber(row.id, Number(selector));
    else if (selector === 'latest') found = await repo.latestVersion(row.id);
    else if (isUuid(selector)) found = await repo.findVersion(row.id, selector.toLowerCase());
    else {
      const id = await labelId(row.organisation_id, row.workspace_id, selector);
      found = id === null ? undefined : await repo.versionWithLabel(row.id, id);
    }
    if (!found)
      throw new AppError('NOT_FOUND', `${WHAT[row.kind]} version ${selector ?? 'default'} not found`, { param });
    return found;
  }

  /**
   * The partials a prompt's templates include, and theirs, as `ref → template text`. A partial
   * must be active and in the prompt's workspace; one that includes itself (directly or not) or
   * nests deeper than MAX_PARTIAL_DEPTH is refused, since rendering it would never end.
   */
  async function partials(
    organisationId: string,
    workspaceId: string,
    refs: PartialRef[],
    found = new Map<string, string>(),
    chain: string[] = [],
  ): Promise<Map<string, string>> {
    for (const ref of refs) {
      if (chain.includes(ref.slug))
        throw invalid(
          `partials.${ref.ref}`,
          `The partial ${ref.slug} includes itself: ${[...chain, ref.slug].join(' → ')}.`,
        );
      if (chain.length >= MAX_PARTIAL_DEPTH)
        throw invalid(`partials.${ref.ref}`, `Partials nest more than ${MAX_PARTIAL_DEPTH} deep.`);
      if (found.has(ref.ref)) continue;
      const partial = await repo.findActiveBySlug(organisationId, 'partial', ref.slug);
      if (!partial || partial.workspace_id !== workspaceId)
        throw invalid(
          `partials.${ref.ref}`,
          `The template includes {{>${ref.ref}}}, but no partial ${ref.slug} exists in its workspace.`,
        );
      const chosen = await version(partial, ref.selector, `partials.${ref.ref}`).catch((error: unknown) => {
        throw error instanceof AppError && error.code === 'NOT_FOUND'
          ? invalid(`partials.${ref.ref}`, `The partial ${ref.slug} has no version ${ref.selector}.`)
          : error;
      });
      found.set(ref.ref, chosen.string);
      const content = { string: chosen.string, is_raw_template: true };
      await partials(organisationId, workspaceId, partialsOf(parsedTemplates(content), `partials.${ref.ref}`), found, [
        ...chain,
        ref.slug,
      ]);
    }
    return found;
  }

  /** Renders a prompt version with its partials: the request body it makes. */
  async function render(
    row: PromptRow,
    chosen: PromptVersionRow,
    variables: Record<string, unknown>,
    hyperparameters: Record<string, unknown> = {},
  ): Promise<RenderedPrompt> {
    const content = contentOf(chosen);
    const included = await partials(row.organisation_id, row.workspace_id, partialsOf(parsedTemplates(content)));
    return renderPrompt(content, variables, included, hyperparameters);
  }

  return {
    find,
    version,
    partials,
    render,

    /** `{id}@{selector}` found, its version chosen and rendered: what the gateway runs. */
    async prepare(
      caller: PromptCaller,
      ref: string,
      input: { variables: Record<string, unknown>; hyperparameters?: Record<string, unknown> },
    ): Promise<PromptRun> {
      const { idOrSlug, selector } = splitRef(ref);
      const prompt = await find(caller, 'prompt', idOrSlug, 'promptId');
      if (prompt.status !== 'active') throw notFound('Prompt', 'promptId');
      const chosen = await version(prompt, selector, 'promptId');
      const rendered = await render(prompt, chosen, input.variables, input.hyperparameters);
      const labelled =
        selector !== null &&
        !/^[0-9]+$/.test(selector) &&
        !isUuid(selector) &&
        !['latest', 'default'].includes(selector);
      const label = labelled
        ? selector
        : chosen.label_id === null
          ? null
          : ((await repo.findLabel(prompt.organisation_id, chosen.label_id))?.name ?? null);
      return { prompt, version: chosen, label, rendered };
    },
  };
}

export type PromptLookup = ReturnType<typeof createPromptLookup>;
