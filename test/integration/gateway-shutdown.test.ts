import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { spawnServe } from '../helpers/cli.js';
import { apiClient } from '../helpers/http.js';
import { startMockOpenAI } from '../helpers/mock-openai-upstream.js';
import { makeTempDir } from '../helpers/start-test-server.js';

const ADMIN_KEY = `shutdown-test-${'s'.repeat(30)}`;

describe('gateway shutdown', () => {
  it('on SIGTERM lets a stream in flight finish, writes every request log, and exits 0', async () => {
    const mock = await startMockOpenAI({ holdStream: true });
    onTestFinished(() => mock.close());
    const dataDir = makeTempDir();
    const server = await spawnServe(['--data-dir', dataDir], {
      SVCGW_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY,
      SVCGW_LOG_FLUSH_INTERVAL_MS: '60000',
    });
    const headers = {
      'x-service-api-key': ADMIN_KEY,
      'content-type': 'application/json',
      'x-service-provider': 'openai',
      'x-service-custom-host': mock.baseUrl,
      authorization: 'Bearer k',
    };
    const body = (stream: boolean) =>
      JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream });

    // Ten finished requests sit in the batch writer (its flush interval is a minute).
    mock.releaseStreams();
    for (let i = 0; i < 10; i++)
      expect(
        (await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers, body: body(false) })).status,
      ).toBe(200);

    mock.holdStreams();
    const streaming = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers, body: body(true) });
    const reader = streaming.body!.getReader();
    await reader.read(); // the first chunk has arrived; the provider holds the rest
    server.child.kill('SIGTERM');
    await sleep(200);
    mock.releaseStreams();
    let text = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      text += Buffer.from(chunk.value).toString();
    expect(text.trim().endsWith('data: [DONE]')).toBe(true);
    expect(await server.exited).toBe(0);

    const restarted = await spawnServe(['--data-dir', dataDir]);
    const logs = await apiClient(restarted.url, ADMIN_KEY).get('/v1/logs?page_size=100');
    expect(logs.body.total).toBe(11);
    expect(logs.body.data[0]).toMatchObject({ stream: true, status_code: 200, is_success: true });
  });
});
