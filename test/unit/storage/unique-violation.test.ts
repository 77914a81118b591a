import SQLite from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { parseChange, createChangeBus, type Change } from '../../../src/storage/change-bus.js';
import { conflictingField, isUniqueViolation, uniqueViolation } from '../../../src/storage/unique-violation.js';

/** The error SQLite throws for `insert` run twice (or `again` the second time). */
function sqliteError(setup: string, insert: string, again = insert): unknown {
  const db = new SQLite(':memory:');
  db.exec(setup);
  db.exec(insert);
  try {
    db.exec(again);
  } catch (error) {
    return error;
  } finally {
    db.close();
  }
  throw new Error('no error');
}

describe('unique violations on both engines', () => {
  it('names the field of a composite unique index on SQLite, and of a primary key', () => {
    const error = sqliteError(
      'create table w (organisation_id text, slug text, unique (organisation_id, slug))',
      "insert into w values ('o', 's')",
    );
    expect(uniqueViolation(error)).toEqual({ columns: ['organisation_id', 'slug'] });
    expect(conflictingField(uniqueViolation(error)!)).toBe('slug');
    const pk = sqliteError(
      'create table m (workspace_id text, user_id text, primary key (workspace_id, user_id))',
      "insert into m values ('w', 'u')",
    );
    expect(conflictingField(uniqueViolation(pk)!)).toBe('user_id');
  });

  it('reads the columns of a PostgreSQL 23505 from its detail, never keeping the values', () => {
    // The fields node-postgres puts on a unique violation.
    const error = Object.assign(new Error('duplicate key value violates unique constraint "users_org_email"'), {
      code: '23505',
      detail: 'Key (organisation_id, lower(email))=(o1, ada@example.test) already exists.',
      constraint: 'users_org_email',
    });
    expect(uniqueViolation(error)).toEqual({ columns: ['organisation_id', 'email'] });
    expect(conflictingField(uniqueViolation(error)!)).toBe('email');
    expect(conflictingField({ columns: ['key_hash'] })).toBeNull();
  });

  it('leaves other errors alone', () => {
    const notNull = sqliteError(
      'create table t (a text, b text not null)',
      "insert into t (a, b) values ('x', 'y')",
      "insert into t (a) values ('x')",
    );
    expect(isUniqueViolation(notNull)).toBe(false);
    expect(isUniqueViolation(Object.assign(new Error('fk'), { code: '23503' }))).toBe(false);
    expect(isUniqueViolation(null)).toBe(false);
  });
});

describe('change bus', () => {
  it('runs local handlers at once and sends to the transport; received messages run them too', async () => {
    const sent: string[] = [];
    let receive: (message: string) => void = () => undefined;
    let resume: () => void = () => undefined;
    const bus = createChangeBus({
      transport: {
        send: async (message) => void sent.push(message),
        start: async (onMessage, onResume) => {
          receive = onMessage;
          resume = onResume;
        },
        close: async () => undefined,
      },
    });
    await bus.start();
    const seen: Change[] = [];
    bus.on((change) => seen.push(change));
    bus.publish({ topic: 'key', id: 'k1' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual(['{"topic":"key","id":"k1"}']);
    receive('{"topic":"configs"}');
    receive('not json');
    receive('{"topic":"drop tables"}');
    resume();
    expect(seen).toEqual([{ topic: 'key', id: 'k1' }, { topic: 'configs' }, { topic: 'all' }]);
    expect(parseChange('{"topic":"key"}')).toBeNull();
  });
});
