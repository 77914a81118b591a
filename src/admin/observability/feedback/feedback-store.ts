import type SQLite from 'better-sqlite3';
import type { Selectable } from 'kysely';
import { newId, newTimeOrderedId } from '../../../lib/ids.js';
import { rawSqlite, type Db } from '../../../storage/database.js';
import { noteRawWrite } from '../../../storage/request-transaction.js';
import type { FeedbackTable } from '../tables.js';

export type FeedbackRow = Selectable<FeedbackTable>;

/** Feedback as log records and traces show it. */
export function toFeedbackObject(row: FeedbackRow) {
  return {
    id: row.id,
    trace_id: row.trace_id,
    workspace_id: row.workspace_id,
    value: row.value,
    weight: row.weight,
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, unknown>),
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    object: 'feedback' as const,
  };
}

export type FeedbackObject = ReturnType<typeof toFeedbackObject>;

/** SQLite's default bound-parameter limit is far above this; chunks keep one IN list small. */
const TRACES_PER_QUERY = 500;

/**
 * Feedback of several traces at once, oldest first per trace, for the logs routes (list and
 * get) and traces. Feedback belongs to the workspace of the key that gave it, so callers pass
 * `workspaceId` to show a log only the feedback of its own workspace, or filter the returned
 * objects by `workspace_id` themselves when the traces span workspaces.
 */
export async function feedbackForTraces(
  db: Db,
  organisationId: string,
  traceIds: readonly string[],
  workspaceId?: string,
): Promise<Map<string, FeedbackObject[]>> {
  const byTrace = new Map<string, FeedbackObject[]>();
  const unique = [...new Set(traceIds)];
  for (let i = 0; i < unique.length; i += TRACES_PER_QUERY) {
    let query = db
      .selectFrom('feedback')
      .selectAll()
      .where('organisation_id', '=', organisationId)
      .where('trace_id', 'in', unique.slice(i, i + TRACES_PER_QUERY));
    if (workspaceId !== undefined) query = query.where('workspace_id', '=', workspaceId);
    for (const row of await query.orderBy('created_at').orderBy('id').execute()) {
      const list = byTrace.get(row.trace_id) ?? [];
      list.push(toFeedbackObject(row));
      byTrace.set(row.trace_id, list);
    }
  }
  return byTrace;
}

const COLUMNS = [
  'id',
  'organisation_id',
  'workspace_id',
  'trace_id',
  'value',
  'weight',
  'metadata',
  'api_key_id',
  'created_at',
  'last_updated_at',
] as const;

/**
 * On SQLite: one INSERT prepared once and run per row, the batch in one transaction. Guardrails
 * give a feedback row per request, and kysely built and prepared a new multi-row statement for
 * every batch, which cost more than the rows.
 */
function preparedInsert(sqlite: SQLite.Database): (rows: FeedbackRow[]) => void {
  const insert = sqlite.prepare(
    `INSERT INTO feedback (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`,
  );
  return sqlite.transaction((rows: FeedbackRow[]) => {
    for (const row of rows) insert.run(COLUMNS.map((column) => row[column] ?? null));
  });
}

export function createFeedbackStore(db: Db) {
  const sqlite = rawSqlite(db);
  let insertRows: ((rows: FeedbackRow[]) => void) | null = null;
  return {
    async create(input: Omit<FeedbackRow, 'id' | 'created_at' | 'last_updated_at'>, now: string): Promise<FeedbackRow> {
      const row: FeedbackRow = { id: newId(), ...input, created_at: now, last_updated_at: now };
      await db.insertInto('feedback').values(row).execute();
      return row;
    },
    /**
     * Several rows in one insert, each with its own time (guardrail feedback, batched). Their ids
     * are time-ordered, like the traces they hang on: a row per request lands at the end of the
     * primary key's index instead of on a random page of it.
     */
    async createMany(inputs: Array<Omit<FeedbackRow, 'id' | 'last_updated_at'>>): Promise<void> {
      if (inputs.length === 0) return;
      const rows = inputs.map((input) => ({ id: newTimeOrderedId(), ...input, last_updated_at: input.created_at }));
      if (!sqlite) {
        await db.insertInto('feedback').values(rows).execute();
        return;
      }
      const insert = (insertRows ??= preparedInsert(sqlite));
      insert(rows);
      // Written inside an admin request's open transaction: written again if that is undone.
      noteRawWrite(sqlite, () => insert(rows));
    },
    find: (organisationId: string, id: string) =>
      db
        .selectFrom('feedback')
        .selectAll()
        .where('organisation_id', '=', organisationId)
        .where('id', '=', id)
        .executeTakeFirst(),
    async update(
      id: string,
      changes: Pick<FeedbackRow, 'value' | 'weight' | 'metadata' | 'last_updated_at'>,
    ): Promise<void> {
      await db.updateTable('feedback').set(changes).where('id', '=', id).execute();
    },
  };
}
