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
