import Mustache from 'mustache';
import { AppError, invalid } from '../lib/errors.js';

/**
 * Mustache templates of prompts: parsing (a template that does not parse is refused when it is
 * saved), the partials a template names, the variables it needs, and rendering. Values are
 * inserted as they are: prompts are not HTML, so nothing is escaped.
 */

type Spans = ReturnType<typeof Mustache.parse>;

/** How deep partials may include partials; deeper (or a cycle) is refused. */
export const MAX_PARTIAL_DEPTH = 5;

/** `{{>name}}`, `{{>name@3}}`, `{{>name@latest}}`, `{{>name@production}}`. */
const PARTIAL_REF = /^([a-z0-9][a-z0-9-]{0,62})(?:@([A-Za-z0-9_-]{1,64}))?$/;

export interface PartialRef {
  /** The reference as written in the template, which is also the key partials are rendered by. */
  ref: string;
  slug: string;
  /** A version number, `latest`, a label name, or null for the default version. */
  selector: string | null;
}

export function parsePartialRef(ref: string): PartialRef | null {
  const match = PARTIAL_REF.exec(ref);
  return match ? { ref, slug: match[1]!, selector: match[2] ?? null } : null;
}

/** Parses a template, or fails with a 400 on `param` saying where it broke. */
export function parseTemplate(text: string, param: string): Spans {
  try {
    return Mustache.parse(text);
  } catch (error) {
    throw invalid(param, `The template does not parse: ${(error as Error).message}`);
  }
}

/** Every partial reference in a template (sections included), in order of appearance, once each. */
export function partialRefs(
  spans: Spans,
  param: string,
  into = new Map<string, PartialRef>(),
): Map<string, PartialRef> {
  for (const span of spans) {
    if (span[0] === '>') {
      const parsed = parsePartialRef(span[1]);
      if (!parsed)
        throw invalid(
          param,
          `{{>${span[1]}}} is not a partial reference: write {{>slug}}, {{>slug@<version>}}, {{>slug@latest}} or {{>slug@<label>}}.`,
        );
      into.set(parsed.ref, parsed);
    }
    const children = span[4];
    if (Array.isArray(children)) partialRefs(children, param, into);
  }
  return into;
}

type Stack = readonly unknown[];

/** Mustache's lookup: the innermost context that has the name's first part, then its dotted path. */
function lookup(stack: Stack, name: string): { found: boolean; value: unknown } {
  if (name === '.') return { found: true, value: stack[stack.length - 1] };
  const parts = name.split('.');
  for (let i = stack.length - 1; i >= 0; i--) {
    let value: unknown = stack[i];
    let found = true;
    for (const part of parts) {
      if (value !== null && typeof value === 'object' && Object.prototype.hasOwnProperty.call(value, part)) {
        value = (value as Record<string, unknown>)[part];
      } else {
        found = false;
        break;
      }
    }
    if (found) return { found: true, value };
  }
  return { found: false, value: undefined };
}

/**
 * The variables a render would leave empty: names used where they would be printed that no
 * context has. Sections (`{{#name}}`, `{{^name}}`) are optional: a missing one is false.
 * Partials are checked where they are included, with the contexts in force there.
 */
export function missingVariables(
  spans: Spans,
  stack: Stack,
  partials: ReadonlyMap<string, Spans>,
  missing = new Set<string>(),
  depth = 0,
): Set<string> {
  for (const span of spans) {
    const [type, name] = span;
    if (type === 'name' || type === '&') {
      if (!lookup(stack, name).found) missing.add(name);
    } else if (type === '#' || type === '^') {
      const children = span[4] as Spans;
      const { found, value } = lookup(stack, name);
      const empty = !found || !value || (Array.isArray(value) && value.length === 0);
      if (type === '^') {
        if (empty) missingVariables(children, stack, partials, missing, depth);
      } else if (!empty) {
        const items = Array.isArray(value) ? value : [value];
        for (const item of items)
          missingVariables(children, item === true ? stack : [...stack, item], partials, missing, depth);
      }
    } else if (type === '>' && depth < MAX_PARTIAL_DEPTH) {
      const partial = partials.get(name);
      if (partial) missingVariables(partial, stack, partials, missing, depth + 1);
    }
  }
  return missing;
}

const asText = (value: unknown): string =>
  value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value);

/** Renders one template with the variables and partials given; nothing is HTML-escaped. */
export function renderText(text: string, variables: Record<string, unknown>, partials: Record<string, string>): string {
  return Mustache.render(text, variables, partials, { escape: asText });
}

/** The first missing variable as a 400 naming it (`param` is `variables.<name>`), listing all. */
export function missingVariableError(missing: ReadonlySet<string>): AppError {
  const names = [...missing];
  return invalid(
    `variables.${names[0]}`,
    `Missing variable${names.length === 1 ? '' : 's'}: ${names.join(', ')}. Send ${names.length === 1 ? 'it' : 'them'} in "variables".`,
  );
}
