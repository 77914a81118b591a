import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { onTestFinished } from 'vitest';
import { POSTGRES_ADMIN_URL } from './services.js';

/**
 * A fresh PostgreSQL database for one test, dropped when the test ends (connections still open
 * to it are cut first). Returns its URL.
 */
export async function createTestDatabase(): Promise<string> {
  const name = `svcgw_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  onTestFinished(() => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
