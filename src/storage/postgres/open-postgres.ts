import type pg from 'pg';
import { Kysely, PostgresAdapter, PostgresDialect, type QueryExecutor } from 'kysely';
import type { Database } from '../schema.js';
import { PostgresColumnTypes } from './column-types.js';
import { pgDriver } from './driver.js';

const INT8 = 20;
const NUMERIC = 1700;

/**
 * Counts, sums of integers and bigint columns come back as JavaScript numbers, as they do from
 * SQLite: every such value the gateway stores (tokens, milliseconds, row counts) is far below
 * 2^53. Per pool, so that other users of `pg` in the process keep the driver's defaults.
 */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 || oid === NUMERIC
      ? Number
      : (pgDriver().types.getTypeParser(oid, format) as (
          value: string,
        ) => unknown)) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * Session settings of every connection. JIT compilation costs 50–130 ms per analytics statement,
 * more than the statement itself (docs/scale-out.md); `options=` in the URL overrides this.
 */
export const SESSION_OPTIONS = '-c jit=off';

/** A pool of connections to the PostgreSQL database of `url`; `onError` hears about idle connections that broke. */
export function openPostgresPool(url: string, onError: (error: Error) => void): pg.Pool {
  const pool = new (pgDriver().Pool)({
    connectionString: url,
    types,
    max: 10,
    application_name: 'svcgw',
    options: SESSION_OPTIONS,
  });
  pool.on('error', onError);
  return pool;
}

export function postgresKysely(pool: pg.Pool): Kysely<Database> {
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }), plugins: [new PostgresColumnTypes()] });
}

/** Whether a database (or a transaction of one, as migrations get) is PostgreSQL. */
export const isPostgres = (db: { getExecutor(): QueryExecutor }): boolean =>
  db.getExecutor().adapter instanceof PostgresAdapter;
