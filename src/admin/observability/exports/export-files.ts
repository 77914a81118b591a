import { createReadStream } from 'node:fs';
import { mkdir, open, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { Db } from '../../../storage/database.js';
import { isPostgres } from '../../../storage/postgres/open-postgres.js';

/** An export's file while the runner writes it. */
export interface ExportFileWriter {
  append(text: string): Promise<void>;
  /** Makes what was appended durable; the file is complete. */
  finish(): Promise<void>;
  close(): Promise<void>;
}

/** Where finished export files live, and how they are read back for a download. */
export interface ExportFiles {
  /** A new, empty file for the export (what an interrupted earlier run left is dropped). */
  create(id: string): Promise<ExportFileWriter>;
  /** The file's JSONL, or null when it is not there. */
  read(id: string): Promise<Readable | null>;
  remove(id: string): Promise<void>;
}

/**
 * Files on disk on one box (SQLite); in the database when instances share PostgreSQL, so that a
 * download reaching any instance finds the file another one wrote.
 */
export const exportFilesFor = (db: Db, dir: string): ExportFiles =>
  isPostgres(db) ? databaseExportFiles(db) : directoryExportFiles(dir);

/** `<dir>/<id>.jsonl`, mode 0600. */
export function directoryExportFiles(dir: string): ExportFiles {
  const pathOf = (id: string) => join(dir, `${id}.jsonl`);
  return {
    async create(id) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await rm(pathOf(id), { force: true });
      const file = await open(pathOf(id), 'wx', 0o600);
      await file.chmod(0o600); // whatever the umask
      return {
        append: async (text) => void (await file.write(text)),
        finish: () => file.sync(),
        close: () => file.close(),
      };
    },
    async read(id) {
      const found = await stat(pathOf(id)).catch(() => null);
      return found ? createReadStream(pathOf(id)) : null;
    },
    remove: (id) => rm(pathOf(id), { force: true }),
  };
}

/** One `log_export_chunks` row per append; read back one row at a time, in order. */
export function databaseExportFiles(db: Db): ExportFiles {
  const remove = async (id: string) =>
    void (await db.deleteFrom('log_export_chunks').where('export_id', '=', id).execute());
  return {
    async create(id) {
      await remove(id);
      let seq = 0;
      return {
        append: async (text) =>
          void (await db.insertInto('log_export_chunks').values({ export_id: id, seq: ++seq, data: text }).execute()),
        finish: async () => undefined, // every append committed on its own
        close: async () => undefined,
      };
    },
    async read(id) {
      async function* chunks(): AsyncGenerator<string> {
        for (let after = 0; ;) {
          const next = await db
            .selectFrom('log_export_chunks')
            .select(['seq', 'data'])
            .where('export_id', '=', id)
            .where('seq', '>', after)
            .orderBy('seq')
            .limit(1)
            .executeTakeFirst();
          if (!next) return;
          after = next.seq;
          yield next.data;
        }
      }
      return Readable.from(chunks());
    },
    remove,
  };
}
