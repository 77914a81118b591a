import { AppError } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import { isUniqueViolation } from '../../storage/unique-violation.js';

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

/**
 * Inserts a row whose slug was checked free just before: another request may have taken it in
 * between (instances do not wait for each other), which is a conflict on `slug`, not a 500.
 */
export async function insertWithSlug(insert: () => Promise<unknown>, slug: string): Promise<void> {
  try {
    await insert();
  } catch (error) {
    if (isUniqueViolation(error))
      throw new AppError('CONFLICT', `The slug ${slug} was taken by another request at the same moment.`, {
        param: 'slug',
        cause: error,
      });
    throw error;
  }
}
