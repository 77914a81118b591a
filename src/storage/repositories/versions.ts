import { sql, type QueryExecutorProvider } from 'kysely';

/** Tables of immutable versions, each numbered from 1 per parent row. */
const VERSION_TABLES = {
  config_versions: 'config_id',
  guardrail_versions: 'guardrail_id',
  prompt_versions: 'prompt_id',
} as const;

/**
 * The number the next version of `parentId` takes: one past the highest so far. Read inside the
 * transaction that inserts the version, so two saves cannot take the same number.
 */
export async function nextVersionNumber(
  trx: QueryExecutorProvider,
  table: keyof typeof VERSION_TABLES,
  parentId: string,
): Promise<number> {
  const { rows } = await sql<{ highest: number | string | null }>`
    SELECT max(version) AS highest FROM ${sql.table(table)} WHERE ${sql.ref(VERSION_TABLES[table])} = ${parentId}`.execute(
    trx,
  );
  return Number(rows[0]?.highest ?? 0) + 1;
}
