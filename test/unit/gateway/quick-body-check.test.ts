import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileQuickCheck } from '../../../src/gateway/quick-body-check.js';
import {
  chatCompletionBody,
  completionBody,
  embeddingsBody,
  imageGenerationBody,
  moderationBody,
  quickBodyChecks,
  rerankBody,
  responsesBody,
  speechBody,
} from '../../../src/gateway/request-schemas.js';

/** Values of every kind the schemas bound: types, edges on both sides, nested shapes. */
const POOL: unknown[] = [
  undefined,
  null,
  true,
  false,
  0,
  1,
  -1,
  0.5,
  1.5,
  2,
  2.5,
  -2,
  -2.5,
  -3,
  4,
  5,
  6,
  10,
  11,
  20,
  21,
  128,
  129,
  1e20,
  2 ** 53,
  -100,
  100,
  101,
  -101,
  '',
  'x',
  'gpt-4o',
  'float',
  'base64',
  'alloy',
  [],
  ['a'],
  [''],
  ['a', 'b', 'c', 'd'],
  ['a', 'b', 'c', 'd', 'e'],
  [1, 2],
  [1.5],
  [[1], [2]],
  [[]],
  [[1.5]],
  [{}],
  [{ role: 'user', content: 'hi' }],
  new Array(2049).fill('a'),
  new Array(2048).fill('a'),
  {},
  { include_usage: true },
  { include_usage: 'yes' },
  { other: 1 },
  { a: 1 },
  { a: 200 },
  { a: 'b' },
];

/** A small deterministic generator, so that a failure can be replayed. */
function random(seed: number) {
  let state = seed;
  return (n: number) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return Math.floor((state / 2 ** 31) * n); // the high bits: an LCG's low bits repeat
  };
}

/** Bodies made of a valid one with a few fields set to values from the pool (or left out). */
function bodiesFor(valid: Record<string, unknown>, fields: string[], count: number): unknown[] {
  const pick = random(fields.length + count);
  const keys = [...fields, 'extra_field'];
  const bodies: unknown[] = [null, [], 'text', 5, {}, valid];
  for (let i = 0; i < count; i++) {
    const body: Record<string, unknown> = { ...valid };
    for (let changes = 1 + pick(3); changes > 0; changes--) {
      const key = keys[pick(keys.length)]!;
      const value = POOL[pick(POOL.length + 1)];
      if (value === undefined && pick(2) === 0) delete body[key];
      else body[key] = value;
    }
    bodies.push(body);
  }
  return bodies;
}

const fieldsOf = (schema: z.ZodType) => Object.keys((schema as z.ZodObject).shape);

const SCHEMAS: Array<[string, z.ZodType, Record<string, unknown>]> = [
  ['chat', chatCompletionBody, { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }],
  ['completion', completionBody, { model: 'gpt-4o', prompt: 'hi' }],
  ['embeddings', embeddingsBody, { model: 'e', input: 'hi' }],
  ['rerank', rerankBody, { model: 'r', query: 'q', documents: ['a'] }],
  ['image generation', imageGenerationBody, { prompt: 'a cat' }],
  ['speech', speechBody, { model: 'tts', input: 'hi', voice: 'alloy' }],
  ['responses', responsesBody, { model: 'gpt-4o', input: 'hi' }],
];

describe('quick body checks', () => {
  it.each(SCHEMAS)(
    '%s: says valid exactly when zod does, and zod would answer the body as sent',
    (_name, schema, valid) => {
      const quick = quickBodyChecks.get(schema);
      expect(quick).toBeDefined();
      let passed = 0;
      for (const body of bodiesFor(valid, fieldsOf(schema), 4000)) {
        const parsed = schema.safeParse(body);
        expect({ body, quick: quick!(body) }).toEqual({ body, quick: parsed.success });
        if (parsed.success) {
          passed++;
          expect(parsed.data).toEqual(body);
        }
      }
      // The generated bodies exercise both answers.
      expect(passed).toBeGreaterThan(200);
      expect(passed).toBeLessThan(3800);
    },
  );

  it('passes the usual chat body and the joined-field rules as zod does', () => {
    const quick = quickBodyChecks.get(chatCompletionBody)!;
    const messages = [{ role: 'user', content: 'hello' }];
    expect(quick({ model: 'gpt-4o', messages })).toBe(true);
    expect(quick({ model: 'gpt-4o', messages, stream: true, stream_options: { include_usage: true } })).toBe(true);
    expect(quick({ model: 'gpt-4o', messages, stream_options: { include_usage: true } })).toBe(false);
    expect(quick({ model: 'gpt-4o', messages: [] })).toBe(false);
    const completion = quickBodyChecks.get(completionBody)!;
    expect(completion({ prompt: 'x', best_of: 2, n: 3 })).toBe(false);
    expect(completion({ prompt: 'x', best_of: 2, stream: true })).toBe(false);
    expect(completion({ prompt: 'x', best_of: 3, n: 2 })).toBe(true);
  });

  it('leaves to zod what it cannot decide for certain', () => {
    expect(quickBodyChecks.has(moderationBody)).toBe(false);
    expect(compileQuickCheck(z.object({ a: z.string() }))).toBeNull(); // strips unknown keys
    expect(compileQuickCheck(z.looseObject({ a: z.string().email() }))).toBeNull();
    expect(compileQuickCheck(z.looseObject({ a: z.string().transform((s) => s.length) }))).toBeNull();
    expect(compileQuickCheck(z.looseObject({ a: z.number().refine((n) => n > 1) }))).toBeNull();
    expect(compileQuickCheck(z.looseObject({ a: z.string() }).refine(() => true))).toBeNull();
  });
});
