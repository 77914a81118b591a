import { isUuid } from '../../lib/ids.js';

/** What the repositories of integrations and servers (MCP and agents) look rows up by. */
export interface FindsByIdOrSlug<T> {
  findById: (organisationId: string, id: string) => Promise<T | undefined>;
  /** The active row with the slug, or else the newest archived one. */
  findBySlug: (organisationId: string, slug: string) => Promise<T | undefined>;
}

/** The row a caller names by id (any case) or slug, in their organisation. */
export function findByIdOrSlug<T>(
  repo: FindsByIdOrSlug<T>,
  organisationId: string,
  ref: string,
): Promise<T | undefined> {
  return isUuid(ref) ? repo.findById(organisationId, ref.toLowerCase()) : repo.findBySlug(organisationId, ref);
}
