import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { framedAsObject, largeAnswerFacts } from '../../../src/gateway/large-answer.js';
import { usageFromBody } from '../../../src/providers/usage.js';

const embeddings = (count: number, usage: object, model = 'text-embedding-3-small') =>
  JSON.stringify({
    object: 'list',
    data: Array.from({ length: count }, (_, index) => ({
      object: 'embedding',
      index,
      embedding: Array.from({ length: 256 }, (_, i) => Math.sin(index * 256 + i)),
    })),
    model,
    usage,
  });

describe('a large answer read without parsing it whole', () => {
  it('reads an embeddings list’s usage and model from its end, as a parse of the whole would', () => {
    const body = Buffer.from(embeddings(600, { prompt_tokens: 4096, total_tokens: 4096 }));
    expect(body.length).toBeGreaterThan(2 * 1024 * 1024);
    const whole = JSON.parse(body.toString()) as { model: string };
    expect(largeAnswerFacts(body)).toEqual({ usage: usageFromBody(whole), model: whole.model });
    expect(largeAnswerFacts(body).usage).toMatchObject({ promptTokens: 4096, totalTokens: 4096 });
  });

  it('reads a chat answer’s model from its start, and usage with its details', () => {
    const content = 'word "model": "not-this-one" usage {'.repeat(60_000);
    const body = Buffer.from(
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        model: 'gpt-4o-2024-08-06 ✓ modèle',
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage: {
          prompt_tokens: 12,
          completion_tokens: 500_000,
          total_tokens: 500_012,
          prompt_tokens_details: { cached_tokens: 8 },
        },
      }),
    );
    expect(largeAnswerFacts(body)).toEqual({
      usage: { promptTokens: 12, completionTokens: 500_000, cachedTokens: 8, totalTokens: 500_012 },
      model: 'gpt-4o-2024-08-06 ✓ modèle',
    });
  });

  it('agrees with a whole parse on any answer whose usage is in its last 64 KiB', () => {
    const usage = fc.record(
      {
        prompt_tokens: fc.nat(1e6),
        completion_tokens: fc.nat(1e6),
        total_tokens: fc.nat(2e6),
        prompt_tokens_details: fc.record({ cached_tokens: fc.nat(1e6) }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(
        fc.string({ maxLength: 3000 }),
        fc.option(usage, { nil: undefined }),
        fc.string({ maxLength: 40 }),
        (text, u, model) => {
          const body = Buffer.from(
            JSON.stringify({ id: 'x', model, choices: [{ message: { content: text } }], ...(u ? { usage: u } : {}) }),
          );
          const whole = JSON.parse(body.toString()) as { model: string };
          const facts = largeAnswerFacts(body);
          expect(facts.usage).toEqual(usageFromBody(whole));
          expect(facts.model).toBe(model === '' ? null : whole.model);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('checks the framing of one JSON object', () => {
    expect(framedAsObject(Buffer.from(' \n{"a":1}\r\n'))).toBe(true);
    expect(framedAsObject(Buffer.from('[{"a":1}]'))).toBe(false);
    expect(framedAsObject(Buffer.from('<html></html>'))).toBe(false);
    expect(framedAsObject(Buffer.from('{'))).toBe(false);
    expect(framedAsObject(Buffer.alloc(0))).toBe(false);
  });
});
