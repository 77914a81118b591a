import { Socket } from 'node:net';

/**
 * Whether a local service (Redis, PostgreSQL) answers on 127.0.0.1. Tests that need one skip
 * when it is absent on a developer's machine, and fail in CI (CI=true), where it must run.
 */
export async function serviceAvailable(port: number): Promise<boolean> {
  const reachable = await new Promise<boolean>((resolve) => {
    const socket = new Socket();
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1');
  });
  if (!reachable && process.env.CI === 'true')
    throw new Error(`CI needs the service on 127.0.0.1:${port}, and it is not reachable`);
  return reachable;
}

export const REDIS_URL = 'redis://127.0.0.1:6379';
export const redisAvailable = () => serviceAvailable(6379);

/** The CI PostgreSQL (trust auth); tests make a database of their own in it (test/helpers/postgres.ts). */
export const POSTGRES_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/test';
export const postgresAvailable = () => serviceAvailable(5432);
