import { isUuid } from '../../lib/ids.js';
import { FatalError } from '../fatal-error.js';
import type { Context, ListBody } from './common.js';

interface Listed {
  id: string;
  workspace_id?: string | null;
  [field: string]: unknown;
}

/**
 * An id as given, or the id of the one item of `path` whose `field` (a name, a user's email) is
 * `ref`. The API addresses these by id only; no match is an error, several a usage error (exit
 * 2) that lists them. Emails compare without case. `query` narrows the list (archived policies).
 */
export async function idByName(
  ctx: Context,
  path: string,
  ref: string,
  what: string,
  options: { field?: string; query?: Record<string, string> } = {},
): Promise<string> {
  if (isUuid(ref)) return ref;
  const field = options.field ?? 'name';
  const same =
    field === 'email'
      ? (v: unknown) => typeof v === 'string' && v.toLowerCase() === ref.toLowerCase()
      : (v: unknown) => v === ref;
  const matches: Listed[] = [];
  for (let page = 0; ; page++) {
    const body = await ctx.client.get<ListBody<Listed>>(path, {
      ...options.query,
      page_size: 1000,
      current_page: page,
    });
    matches.push(...body.data.filter((item) => same(item[field])));
    if (body.data.length < 1000) break;
  }
  if (matches.length === 1) return matches[0]!.id;
  if (matches.length === 0) throw new FatalError(`no ${what} has the id or ${field} ${ref}`);
  const list = matches.map((m) => `  ${m.id}${m.workspace_id ? `  (workspace ${m.workspace_id})` : ''}`).join('\n');
  const plural = /[^aeiou]y$/.test(what) ? `${what.slice(0, -1)}ies` : `${what}s`;
  const named = field === 'name' ? `are named ${ref}` : `have the ${field} ${ref}`;
  throw new FatalError(`${matches.length} ${plural} ${named}; give one of their ids:\n${list}`, 2);
}
