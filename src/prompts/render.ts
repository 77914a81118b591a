import type Mustache from 'mustache';
import { invalid } from '../lib/errors.js';
import {
  missingVariableError,
  missingVariables,
  parseTemplate,
  partialRefs,
  renderText,
  type PartialRef,
} from './template.js';

type Spans = ReturnType<typeof Mustache.parse>;

/** What a version holds that a render needs (JSON fields parsed). */
export interface PromptContent {
  string: string;
  parameters: Record<string, unknown> | null;
  model: string | null;
  functions: unknown[] | null;
  tools: unknown[] | null;
  tool_choice: unknown;
  is_raw_template: boolean;
}

/**
 * The two shapes of template. A `string` that is a JSON array of messages (each with a `role`)
 * is a chat template: every string in the messages is a Mustache template. Any other text is
 * one template: a chat prompt's single user message, or with `is_raw_template` a completion
 * prompt (`POST /v1/completions`).
 */
export type TemplateShape =
  | { kind: 'chat'; messages: Array<Record<string, unknown>>; text: null }
  | { kind: 'completion' | 'chat-text'; messages: null; text: string };

export function templateShape(content: Pick<PromptContent, 'string' | 'is_raw_template'>): TemplateShape {
  if (!content.is_raw_template) {
    const messages = chatMessages(content.string);
    if (messages) return { kind: 'chat', messages, text: null };
  }
  return { kind: content.is_raw_template ? 'completion' : 'chat-text', messages: null, text: content.string };
}

function chatMessages(text: string): Array<Record<string, unknown>> | null {
  if (!text.trimStart().startsWith('[')) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const isMessage = (item: unknown) =>
    item !== null && typeof item === 'object' && typeof (item as { role?: unknown }).role === 'string';
  return Array.isArray(parsed) && parsed.length > 0 && parsed.every(isMessage)
    ? (parsed as Array<Record<string, unknown>>)
    : null;
}

/** Every string of a JSON value with where it is, for templating each one. */
function strings(value: unknown, path: string, out: Array<{ path: string; text: string }> = []) {
  if (typeof value === 'string') out.push({ path, text: value });
  else if (Array.isArray(value)) value.forEach((item, i) => strings(item, `${path}[${i}]`, out));
  else if (value !== null && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) strings(item, `${path}.${key}`, out);
  return out;
}

function mapStrings(value: unknown, render: (text: string) => string): unknown {
  if (typeof value === 'string') return render(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, render));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapStrings(item, render)]));
  return value;
}

/** The templates of a content, parsed: a template that does not parse is a 400 on `param`. */
export function parsedTemplates(content: Pick<PromptContent, 'string' | 'is_raw_template'>, param = 'string'): Spans[] {
  const shape = templateShape(content);
  if (shape.text !== null) return [parseTemplate(shape.text, param)];
  return strings(shape.messages, '').map(({ text }) => parseTemplate(text, param));
}

/** The partials a template (not its partials) names. */
export function partialsOf(templates: Spans[], param = 'string'): PartialRef[] {
  const refs = new Map<string, PartialRef>();
  for (const spans of templates) partialRefs(spans, param, refs);
  return [...refs.values()];
}

export interface RenderedPrompt {
  /** Which gateway route the body is for. */
  endpoint: 'chatComplete' | 'complete';
  body: Record<string, unknown>;
}

/**
 * The request body a prompt makes: the stored parameters, the version's model, tools and
 * tool choice, the rendered messages (or prompt), then `hyperparameters` over all of it.
 * A variable the templates print but `variables` lacks is a 400 naming it.
 */
export function renderPrompt(
  content: PromptContent,
  variables: Record<string, unknown>,
  partials: ReadonlyMap<string, string>,
  hyperparameters: Record<string, unknown> = {},
): RenderedPrompt {
  const shape = templateShape(content);
  const parsedPartials = new Map<string, Spans>();
  for (const [ref, text] of partials) parsedPartials.set(ref, parseTemplate(text, `partials.${ref}`));
  const missing = new Set<string>();
  for (const spans of parsedTemplates(content)) missingVariables(spans, [variables], parsedPartials, missing);
  if (missing.size > 0) throw missingVariableError(missing);

  const partialTexts = Object.fromEntries(partials);
  const render = (text: string) => renderText(text, variables, partialTexts);
  const body: Record<string, unknown> = { ...(content.parameters ?? {}) };
  if (content.model !== null) body.model = content.model;
  if (shape.kind === 'completion') {
    body.prompt = render(shape.text);
  } else {
    body.messages =
      shape.kind === 'chat' ? mapStrings(shape.messages, render) : [{ role: 'user', content: render(shape.text) }];
    if (content.tools !== null) body.tools = content.tools;
    if (content.functions !== null) body.functions = content.functions;
    if (content.tool_choice !== null && content.tool_choice !== undefined) body.tool_choice = content.tool_choice;
  }
  Object.assign(body, hyperparameters);
  if (typeof body.model !== 'string' || body.model.length === 0)
    throw invalid('model', 'The prompt names no model: save one on the prompt or send it in hyperparameters.');
  return { endpoint: shape.kind === 'completion' ? 'complete' : 'chatComplete', body };
}
