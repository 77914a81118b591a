import { describe, expect, it } from 'vitest';
import { startGateway } from '../helpers/gateway.js';

/** An embeddings list of ~3 MB, as OpenAI sends it: data first, then the model and the usage. */
function largeEmbeddings(): Buffer {
  const data = Array.from({ length: 800 }, (_, index) => ({
    object: 'embedding',
    index,
    embedding: Array.from({ length: 256 }, (_, i) => Math.cos(index + i / 7)),
  }));
  return Buffer.from(
    JSON.stringify({
      object: 'list',
      data,
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 6400, total_tokens: 6400 },
    }),
  );
}

describe('a successful answer larger than the gateway parses whole (1 MiB)', () => {
  it('is relayed byte for byte, and logged with the usage and model read from its end', async () => {
    const g = await startGateway();
    const body = largeEmbeddings();
    expect(body.length).toBeGreaterThan(3 * 1024 * 1024);
    g.mock.behave({ kind: 'raw', status: 200, headers: { 'content-type': 'application/json' }, body }, { times: 1 });
    const res = await fetch(`${g.baseUrl}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-api-key': g.adminKey, ...g.viaMock },
      body: JSON.stringify({
        model: 'text-embedding-3-small',
        input: Array(800).fill('hello'),
        encoding_format: 'float',
      }),
    });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(body)).toBe(true);
    const [log] = await g.logs(1);
    expect(log).toMatchObject({
      status_code: 200,
      model: 'text-embedding-3-small',
      prompt_tokens: 6400,
      total_tokens: 6400,
    });
    expect(log.cost).toBeGreaterThan(0);
  });

  it('that is not framed as one JSON object is a 502, not a relayed 200', async () => {
    const g = await startGateway();
    const body = Buffer.from(`[${'1,'.repeat(1024 * 1024)}1]`);
    g.mock.behave({ kind: 'raw', status: 200, headers: { 'content-type': 'application/json' }, body }, { times: 1 });
    const res = await g.admin.post('/v1/embeddings', { model: 'text-embedding-3-small', input: 'hi' }, g.viaMock);
    expect(res.status).toBe(502);
    expect(res.body.error.message).toBe(
      'The provider (openai) answered 200 with a body the gateway could not read: it is not a JSON object.',
    );
  });
});
