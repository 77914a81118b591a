import { isUuid } from '../../lib/ids.js';
import { FatalError } from '../fatal-error.js';
import type { Context, ListBody } from './common.js';

interface Named {
  id: string;
  name: string;
  workspace_id?: string | null;
}

/**
 * An id as given, or the id of the one item of `path` whose name is `ref`. The API addresses
 * these by id only; a name that matches several is a usage error (exit 2) that lists them.
 */
export async function idByName(ctx: Context, path: string, ref: string, what: string): Promise<string> {
  if (isUuid(ref)) return ref;
  const matches: Named[] = [];
  for (let page = 0; ; page++) {
    const body = await ctx.client.get<ListBody<Named>>(path, { page_size: 1000, current_page: page });
    matches.push(...body.data.filter((item) => item.name === ref));
    if (body.data.length < 1000) break;
  }
  if (matches.length === 1) return matches[0]!.id;
  if (matches.length === 0) throw new FatalError(`no ${what} has the id or name ${ref}`);
  const list = matches.map((m) => `  ${m.id}${m.workspace_id ? `  (workspace ${m.workspace_id})` : ''}`).join('\n');
  throw new FatalError(`${matches.length} ${what}s are named ${ref}; give one of their ids:\n${list}`, 2);
}
