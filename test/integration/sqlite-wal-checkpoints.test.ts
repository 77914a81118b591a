import { existsSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { DATABASE_FILE, rawSqlite } from '../../src/storage/database.js';
import { apiClient } from '../helpers/http.js';
import { startMockOpenAI } from '../helpers/mock-openai-upstream.js';
import { startTestServer } from '../helpers/start-test-server.js';

const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };

describe.skipIf(process.env.SVCGW_TEST_ENGINE === 'postgres')('the server’s WAL checkpoints', () => {
  it('stay on the server’s own connection with sqlite_checkpoint_worker off', async () => {
    const g = await startTestServer({ env: { SVCGW_SQLITE_CHECKPOINT_WORKER: 'OFF' } });
    expect(g.server.walCheckpoints).toBeNull();
    expect(rawSqlite(g.server.db)!.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
  });

  it('by default, move to a worker once the server writes much, keep every log row, and end with the server', async () => {
    const mock = await startMockOpenAI();
    onTestFinished(() => mock.close());
    const g = await startTestServer({ autoClose: false });
    onTestFinished(() => g.close());
    const checkpoints = g.server.walCheckpoints!;
    expect(checkpoints.state).toBe('waiting');

    // What hours of request logs would write, in one go: the WAL passes the worker's threshold.
    const sqlite = rawSqlite(g.server.db)!;
    sqlite.exec('CREATE TABLE scratch (text TEXT)');
    const insert = sqlite.prepare('INSERT INTO scratch VALUES (?)');
    sqlite.transaction(() => {
      for (let i = 0; i < 600; i++) insert.run('x'.repeat(8000));
    })();
    await checkpoints.watch();
    await vi.waitFor(() => expect(checkpoints.state).toBe('running'), { timeout: 10_000, interval: 20 });
    expect(sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    expect(g.logLines.some((line) => line.includes('WAL checkpoints run on a worker thread'))).toBe(true);

    const admin = apiClient(g.baseUrl, g.adminKey);
    const headers = {
      'x-service-provider': 'openai',
      'x-service-custom-host': mock.baseUrl,
      authorization: 'Bearer k',
    };
    for (let i = 0; i < 20; i++) expect((await admin.post('/v1/chat/completions', chat, headers)).status).toBe(200);
    await g.server.requestLogs.flush();
    const done = await checkpoints.checkpointNow();
    expect(done!.checkpointed).toBe(done!.log);
    const listed = await admin.get('/v1/logs?page_size=50');
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(20);

    await g.close();
    expect(checkpoints.state).toBe('stopped');
    // Both connections closed, the worker's first: the last one out folded the WAL into the file.
    expect(existsSync(join(g.dataDir, `${DATABASE_FILE}-wal`))).toBe(false);
    const file = new SQLite(join(g.dataDir, DATABASE_FILE), { readonly: true });
    expect(file.prepare('SELECT count(*) FROM request_logs').pluck().get()).toBe(20);
    file.close();
  });
});
