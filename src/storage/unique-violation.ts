/**
 * A row that broke a unique index or primary key: two writers took the same name or slug at
 * once (instances on PostgreSQL do not wait for each other; a check-then-insert can always
 * race). Recognised on both engines, with the columns when the engine names them.
 */
export interface UniqueViolation {
  /** The index's columns, in order (empty when the engine does not say). */
  columns: string[];
}

const SQLITE_CODES = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY']);
const POSTGRES_UNIQUE = '23505';

export function uniqueViolation(error: unknown): UniqueViolation | null {
  if (typeof error !== 'object' || error === null) return null;
  const { code, message, detail } = error as { code?: unknown; message?: unknown; detail?: unknown };
  if (typeof code === 'string' && SQLITE_CODES.has(code)) {
    // "UNIQUE constraint failed: workspaces.organisation_id, workspaces.slug"
    const list = typeof message === 'string' ? /constraint failed: (.+)$/.exec(message)?.[1] : undefined;
    const columns = list && !list.startsWith('index ') ? list.split(', ').map((c) => c.split('.').pop()!) : [];
    return { columns };
  }
  if (code === POSTGRES_UNIQUE) {
    // "Key (organisation_id, slug)=(…, …) already exists." (the values are not kept: they may be personal)
    const list = typeof detail === 'string' ? /^Key \((.+?)\)=\(/.exec(detail)?.[1] : undefined;
    const columns = list ? list.split(', ').map((c) => /^\w+\((\w+)\)$/.exec(c)?.[1] ?? c) : [];
    return { columns };
  }
  return null;
}

export const isUniqueViolation = (error: unknown): boolean => uniqueViolation(error) !== null;

/** Columns that scope a name rather than being it, and columns a client never sends. */
const NOT_FIELDS = new Set([
  'organisation_id',
  'workspace_id',
  'scope',
  'scope_id',
  'key_hash',
  'token_hash',
  'id',
  'seq',
]);

/** The request field a violation is about (`slug`, `email`, `name`), or null when no client-given field is. */
export function conflictingField(violation: UniqueViolation): string | null {
  return violation.columns.filter((column) => !NOT_FIELDS.has(column)).at(-1) ?? null;
}
