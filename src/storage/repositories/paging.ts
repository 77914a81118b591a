import type { SelectQueryBuilder } from 'kysely';

export interface PageWindow {
  limit: number;
  offset: number;
}

/**
 * One page of a filtered list: how many rows the filter matches, and the page of them as `pick`
 * selects and orders them.
 */
export async function pageOf<DB, TB extends keyof DB, O, Row>(
  filtered: SelectQueryBuilder<DB, TB, O>,
  pick: (query: SelectQueryBuilder<DB, TB, O>) => SelectQueryBuilder<DB, TB, Row>,
  page: PageWindow,
): Promise<{ total: number; rows: Row[] }> {
  // kysely cannot name the selected column on a generic builder; PostgreSQL's count is a bigint string.
  const counted = (await filtered
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .executeTakeFirstOrThrow()) as unknown as { total: number | string };
  const rows = (await pick(filtered).limit(page.limit).offset(page.offset).execute()) as Row[];
  return { total: Number(counted.total), rows };
}
