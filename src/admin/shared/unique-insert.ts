import { AppError } from '../../lib/errors.js';
import { isUniqueViolation } from '../../storage/repositories/integrations.js';

/**
 * Runs an insert whose unique name was checked free just before: another request may have taken
 * it in between (instances do not wait for each other), which is a 409 naming the field, not a 500.
 */
export async function insertUnique<T>(insert: () => Promise<T>, conflict: { param: string; message: string }) {
  try {
    return await insert();
  } catch (error) {
    if (isUniqueViolation(error))
      throw new AppError('CONFLICT', conflict.message, { param: conflict.param, cause: error });
    throw error;
  }
}

/** The conflict of a slug taken by a concurrent request. */
export const slugTaken = (slug: string) => ({
  param: 'slug',
  message: `The slug ${slug} was taken by another request at the same moment.`,
});
