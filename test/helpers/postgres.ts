import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { onTestFinished } from 'vitest';
import { POSTGRES_ADMIN_URL, REDIS_URL } from './services.js';

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

/**
 * The environment of instances sharing one new PostgreSQL database: several instances need one
 * Redis for their counters (an instance without it refuses to start beside others), under a
 * key prefix of their own.
 */
export async function sharedInstancesEnv(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  return {
    SVCGW_DATABASE_URL: await createTestDatabase(),
    SVCGW_REDIS_URL: REDIS_URL,
    SVCGW_REDIS_KEY_PREFIX: `svcgw-test-${randomBytes(6).toString('hex')}:`,
    ...extra,
  };
}
