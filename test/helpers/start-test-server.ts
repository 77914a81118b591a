import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { onTestFinished } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import type { Clock } from '../../src/lib/clock.js';
import type { MailTransport } from '../../src/notifications/transport.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { createTestDatabase } from './postgres.js';

export interface TestServer {
  baseUrl: string;
  adminKey: string;
  server: RunningServer;
  dataDir: string;
  /** Every line the server logged, for checks that no secret is ever written. */
  logLines: string[];
  close(): Promise<void>;
}

export function makeTempDir(prefix = 'svcgw-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Under SVCGW_TEST_ENGINE=postgres, the database of each data directory: a restart on it finds its data. */
const databaseOfDataDir = new Map<string, string>();

/**
 * Starts the real server in-process on an ephemeral 127.0.0.1 port over a fresh SQLite file,
 * and stops it when the test ends.
 */
export async function startTestServer(
  options: {
    clock?: Clock;
    env?: Record<string, string>;
    dataDir?: string;
    /** A fixed port, to start again where a closed server was (0, any, by default). */
    port?: number;
    autoClose?: boolean;
    upstreamDispatcher?: Dispatcher;
    /** Where alert e-mails go (starts the delivery worker); see notifications/transport.ts. */
    mailTransport?: MailTransport;
  } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? makeTempDir();
  // SVCGW_TEST_ENGINE=postgres runs a suite on PostgreSQL: a database of its own per data directory,
  // so that a server started again on the directory of a closed one is a restart, as on SQLite.
  let engineEnv: Record<string, string> = {};
  if (process.env.SVCGW_TEST_ENGINE === 'postgres' && !options.env?.SVCGW_DATABASE_URL) {
    const url = databaseOfDataDir.get(dataDir) ?? (await createTestDatabase());
    databaseOfDataDir.set(dataDir, url);
    onTestFinished(() => void databaseOfDataDir.delete(dataDir));
    engineEnv = { SVCGW_DATABASE_URL: url };
  }
  const config = loadConfig({
    flags: { port: options.port ?? 0, host: '127.0.0.1', data_dir: dataDir },
    env: { SVCGW_LOG_LEVEL: 'info', ...engineEnv, ...options.env },
  });
  const logLines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      callback();
    },
  });
  const logger = createLogger({ level: config.log_level, pretty: false, destination });
  const server = await startServer({
    config,
    logger,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.upstreamDispatcher ? { upstreamDispatcher: options.upstreamDispatcher } : {}),
    ...(options.mailTransport ? { mailTransport: options.mailTransport } : {}),
  });
  const adminKey = server.bootstrap.adminApiKey ?? options.env?.SVCGW_BOOTSTRAP_ADMIN_KEY ?? '';
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await server.close();
  };
  if (options.autoClose !== false) onTestFinished(close);
  return { baseUrl: server.url, adminKey, server, dataDir, logLines, close };
}
