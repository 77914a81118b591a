import { z } from 'zod';

/** `page_size` and `current_page` as the spec bounds them (integers ≥ 0, pages 0-based). */
export const paginationQuery = {
  page_size: z.coerce.number().int().min(0).max(1000).default(50).describe('Items per page (0 to 1000).'),
  current_page: z.coerce.number().int().min(0).default(0).describe('0-based page number.'),
};

export const pageWindow = (query: { page_size: number; current_page: number }) => ({
  limit: query.page_size,
  offset: query.current_page * query.page_size,
});

export const listBody = <T>(data: T[], total: number) => ({ object: 'list' as const, total, data });

export const idOrSlug = z.string().min(1).max(255);

const pageSize = z.coerce.number().int().min(0).max(1000);
const pageNumber = z.coerce.number().int().min(0);

/**
 * Paging of the users and invites lists, which the reference gateway spells `pageSize` and
 * `currentPage` there (and `page_size`/`current_page` everywhere else): both spellings are
 * accepted; `foldPaging` turns them into one.
 */
export const pagingBothSpellings = {
  page_size: pageSize.optional().describe('Items per page (0 to 1000, default 50).'),
  current_page: pageNumber.optional().describe('0-based page number.'),
  pageSize: pageSize.optional().describe('page_size, as the reference gateway spells it on users and invites.'),
  currentPage: pageNumber.optional().describe('current_page, as the reference gateway spells it on users and invites.'),
};

/** `pageSize`/`currentPage` folded into `page_size`/`current_page`; both spellings of one with different values is a 400. */
export function foldPaging<
  Q extends { page_size?: number; current_page?: number; pageSize?: number; currentPage?: number },
>(query: Q, ctx: z.RefinementCtx): Omit<Q, 'pageSize' | 'currentPage'> & { page_size: number; current_page: number } {
  const { pageSize: size, currentPage: page, ...rest } = query;
  for (const [snake, camel, a, b] of [
    ['page_size', 'pageSize', rest.page_size, size],
    ['current_page', 'currentPage', rest.current_page, page],
  ] as const) {
    if (a !== undefined && b !== undefined && a !== b)
      ctx.addIssue({
        code: 'custom',
        path: [camel],
        message: `${camel} and ${snake} are the same parameter; send one.`,
      });
  }
  return { ...rest, page_size: rest.page_size ?? size ?? 50, current_page: rest.current_page ?? page ?? 0 };
}
