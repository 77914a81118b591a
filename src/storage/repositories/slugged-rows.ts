import { sql, type Expression, type ExpressionBuilder } from 'kysely';
import type { Db } from '../database.js';
import type { Database } from '../schema.js';
import { activeFirst } from './integrations.js';

/** Rows whose name or slug contains `search` (case-insensitive; `%` and `_` match literally). */
export function nameOrSlugContains<DB, TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>,
  name: Expression<string>,
  slug: Expression<string>,
  search: string,
) {
  const pattern = `%${search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const like = sql<string>`${pattern} escape '\\'`;
  return eb.or([eb(eb.fn('lower', [name]), 'like', like), eb(eb.fn('lower', [slug]), 'like', like)]);
}

/**
 * Organisation rows named by id or by a slug that archiving frees: MCP and agent integrations and
 * servers, configs, guardrails, deployments.
 */
type SluggedTable =
  | 'mcp_integrations'
  | 'mcp_servers'
  | 'agent_integrations'
  | 'agent_servers'
  | 'configs'
  | 'guardrails'
  | 'deployments';

/** `findById`, `findBySlug` and `findActiveBySlug` of a slugged table, within one organisation. */
export function sluggedRowLookups<T extends SluggedTable>(db: Db, table: T) {
  // Kysely checks column names against one table, not a type parameter: these tables share
  // these columns, so the queries are typed on one of them and the rows given their own type.
  const rows = (organisationId: string) =>
    db
      .selectFrom(table as 'mcp_servers')
      .selectAll()
      .where('organisation_id', '=', organisationId);
  type Row = Database[T];
  return {
    findById: (organisationId: string, id: string) =>
      rows(organisationId).where('id', '=', id).executeTakeFirst() as Promise<Row | undefined>,

    /** The active row with this slug, or else the most recently changed archived one. */
    findBySlug: (organisationId: string, slug: string) =>
      rows(organisationId)
        .where('slug', '=', slug)
        .orderBy(activeFirst('status'))
        .orderBy('last_updated_at', 'desc')
        .executeTakeFirst() as Promise<Row | undefined>,

    findActiveBySlug: (organisationId: string, slug: string) =>
      rows(organisationId).where('slug', '=', slug).where('status', '=', 'active').executeTakeFirst() as Promise<
        Row | undefined
      >,
  };
}
