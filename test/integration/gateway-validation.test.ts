import { describe, expect, it } from 'vitest';
import { startGateway } from '../helpers/gateway.js';

const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
const completion = { model: 'gpt-3.5-turbo-instruct', prompt: 'hi' };
const embeddings = { model: 'text-embedding-3-small', input: 'hi' };

describe('gateway: every bound is checked before any upstream call', () => {
  it('rejects out-of-bounds parameters with 400 naming the parameter, and calls no provider', async () => {
    const g = await startGateway();
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['/v1/completions', { ...completion, n: 0 }, 'n'],
      ['/v1/completions', { ...completion, n: 129 }, 'n'],
      ['/v1/chat/completions', { ...chat, n: 129 }, 'n'],
      ['/v1/completions', { ...completion, best_of: 21 }, 'best_of'],
      ['/v1/completions', { ...completion, best_of: -1 }, 'best_of'],
      ['/v1/completions', { ...completion, best_of: 1, n: 2 }, 'best_of'],
      ['/v1/completions', { ...completion, best_of: 3, stream: true }, 'best_of'],
      ['/v1/completions', { ...completion, logprobs: 6 }, 'logprobs'],
      ['/v1/completions', { ...completion, stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
      ['/v1/chat/completions', { ...chat, stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
      ['/v1/completions', { ...completion, frequency_penalty: 2.1 }, 'frequency_penalty'],
      ['/v1/chat/completions', { ...chat, presence_penalty: -2.5 }, 'presence_penalty'],
      ['/v1/completions', { ...completion, logit_bias: { '50256': -101 } }, 'logit_bias[50256]'],
      ['/v1/chat/completions', { ...chat, logit_bias: { '1': 100.5 } }, 'logit_bias[1]'],
      ['/v1/chat/completions', { ...chat, temperature: 2.01 }, 'temperature'],
      ['/v1/chat/completions', { ...chat, temperature: -0.1 }, 'temperature'],
      ['/v1/chat/completions', { ...chat, top_p: 1.5 }, 'top_p'],
      ['/v1/chat/completions', { ...chat, max_tokens: -1 }, 'max_tokens'],
      ['/v1/completions', { ...completion, max_tokens: 1.5 }, 'max_tokens'],
      ['/v1/chat/completions', { ...chat, stream_options: { include_usage: true } }, 'stream_options'],
      ['/v1/chat/completions', { ...chat, stream: false, stream_options: { include_usage: true } }, 'stream_options'],
      ['/v1/chat/completions', { ...chat, temperature: 'hot' }, 'temperature'],
      ['/v1/chat/completions', { model: 'gpt-4o', messages: [] }, 'messages'],
      ['/v1/chat/completions', { model: 'gpt-4o' }, 'messages'],
      ['/v1/embeddings', { ...embeddings, input: '' }, 'input'],
      ['/v1/embeddings', { ...embeddings, input: Array.from({ length: 2049 }, () => 'x') }, 'input'],
      ['/v1/embeddings', { ...embeddings, dimensions: 0 }, 'dimensions'],
      ['/v1/embeddings', { model: 'text-embedding-3-small' }, 'input'],
    ];
    for (const [path, body, param] of cases) {
      const res = await g.admin.post(path, body, g.viaMock);
      expect(res.status, `${path} ${JSON.stringify(body).slice(0, 80)}`).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
      expect(res.body.error.param, `${path} ${JSON.stringify(body).slice(0, 80)}`).toBe(param);
    }
    expect(g.mock.requests).toHaveLength(0);
  });

  it('accepts the values at the edges of every bound', async () => {
    const g = await startGateway();
    const ok: Array<[string, Record<string, unknown>]> = [
      [
        '/v1/completions',
        {
          ...completion,
          n: 1,
          best_of: 20,
          logprobs: 5,
          stop: ['a', 'b', 'c', 'd'],
          frequency_penalty: -2,
          presence_penalty: 2,
          logit_bias: { '1': -100, '2': 100 },
          temperature: 2,
          top_p: 0,
          max_tokens: 0,
        },
      ],
      [
        '/v1/chat/completions',
        { ...chat, n: 128, temperature: 0, top_p: 1, stream: true, stream_options: { include_usage: true } },
      ],
      ['/v1/embeddings', { ...embeddings, input: Array.from({ length: 2048 }, () => 'x'), dimensions: 1 }],
      ['/v1/embeddings', { ...embeddings, input: [1, 2, 3] }],
    ];
    for (const [path, body] of ok) {
      const res = await g.admin.post(path, body, g.viaMock);
      expect(res.status, `${path} ${JSON.stringify(res.body).slice(0, 200)}`).toBe(200);
    }
    expect(g.mock.requests).toHaveLength(4);
  });

  it('quotes a long x-service-config back only in part, and names at most ten of its problems', async () => {
    const g = await startGateway();
    const slug = `cfg-${'x'.repeat(10_000)}`;
    const missing = await g.admin.post('/v1/chat/completions', chat, { 'x-service-config': slug });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('CONFIG_NOT_FOUND');
    expect(missing.body.error.message).toMatch(/^No active config cfg-x+… \(10004 characters\)\.$/);
    expect(missing.body.error.message.length).toBeLessThan(300);

    const targets = Array.from({ length: 25 }, () => ({ provider: 'no-such-provider', api_key: 'k' }));
    const bad = await g.admin.post('/v1/chat/completions', chat, {
      'x-service-config': JSON.stringify({ strategy: { mode: 'fallback' }, targets }),
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('AB01_INVALID_CONFIG');
    expect(bad.body.error.message).toMatch(/^Invalid config \(25 problems\): x-service-config\.targets\[0\]/);
    expect(bad.body.error.message).toMatch(/; and 15 more$/);
    expect(bad.body.error.message).not.toContain('targets[10]');
  });

  it('answers malformed JSON with 400, bad metadata with 400, and logs both', async () => {
    const g = await startGateway();
    const malformed = await g.admin.post('/v1/chat/completions', '{"model": "gpt-4o", "messages": [', {
      ...g.viaMock,
      'content-type': 'application/json',
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('INVALID_JSON');
    const metadata = await g.admin.post('/v1/chat/completions', chat, {
      ...g.viaMock,
      'x-service-metadata': '{"n": 1}',
    });
    expect(metadata.status).toBe(400);
    expect(metadata.body.error.param).toBe('x-service-metadata');
    const notObject = await g.admin.post('/v1/chat/completions', chat, { ...g.viaMock, 'x-service-metadata': 'nope' });
    expect(notObject.status).toBe(400);
    const form = await g.admin.post('/v1/chat/completions', 'a=b', {
      ...g.viaMock,
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(415);
    expect(g.mock.requests).toHaveLength(0);
  });
});
