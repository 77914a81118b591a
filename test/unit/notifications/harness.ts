import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { onTestFinished } from 'vitest';
import { bootstrap } from '../../../src/bootstrap/bootstrap.js';
import { createManualClock } from '../../../src/lib/clock.js';
import { newId } from '../../../src/lib/ids.js';
import { migrateToLatest, openSqlite, type Db } from '../../../src/storage/database.js';
import type { OrgRole, WorkspaceRole } from '../../../src/storage/schema.js';
import { createLogger, type Logger } from '../../../src/telemetry/logger.js';

export const OWNER_EMAIL = 'owner@example.test';

/** A migrated SQLite file in a temp dir with the bootstrap organisation; closed after the test. */
export async function openNotificationsDb() {
  const dataDir = mkdtempSync(join(tmpdir(), 'svcgw-notif-'));
  const opened: Db[] = [];
  const open = () => {
    const db = openSqlite(dataDir);
    opened.push(db);
    return db;
  };
  onTestFinished(async () => {
    for (const db of opened) await db.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const db = open();
  await migrateToLatest(db);
  const clock = createManualClock();
  const boot = await bootstrap(db, { clock, ownerEmail: OWNER_EMAIL });
  return { db, dataDir, clock, organisationId: boot.organisationId, workspaceId: boot.workspaceId, openAnother: open };
}

export async function addPerson(
  db: Db,
  organisationId: string,
  email: string,
  role: OrgRole,
  memberships: Array<{ workspaceId: string; role: WorkspaceRole }> = [],
) {
  const id = newId();
  const now = new Date().toISOString();
  await db
    .insertInto('users')
    .values({
      id,
      organisation_id: organisationId,
      email,
      first_name: null,
      last_name: null,
      role,
      created_at: now,
      last_updated_at: now,
    })
    .execute();
  for (const m of memberships)
    await db
      .insertInto('workspace_members')
      .values({ workspace_id: m.workspaceId, user_id: id, role: m.role, created_at: now })
      .execute();
  return id;
}

export async function addWorkspace(db: Db, organisationId: string, slug: string) {
  const id = newId();
  const now = new Date().toISOString();
  await db
    .insertInto('workspaces')
    .values({
      id,
      organisation_id: organisationId,
      slug,
      name: slug,
      description: null,
      status: 'active',
      is_default: 0,
      created_at: now,
      last_updated_at: now,
    })
    .execute();
  return id;
}

/** A JSON logger whose lines the test can read. */
export function captureLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      callback();
    },
  });
  return { logger: createLogger({ level: 'debug', pretty: false, destination }), lines };
}
