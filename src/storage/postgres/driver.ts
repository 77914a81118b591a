import { createRequire } from 'node:module';
import type pg from 'pg';

const require = createRequire(import.meta.url);
let driver: typeof pg | undefined;

/**
 * The `pg` driver, loaded when a PostgreSQL database is first opened: a server on its embedded
 * SQLite file does not carry it. Synchronous (pg is CommonJS), so opening a database stays so.
 */
export const pgDriver = (): typeof pg => (driver ??= require('pg') as typeof pg);
