import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { describe, expect, it } from 'vitest';
import { boundRequest, estimateRequest, outputBound } from '../../src/limits/estimate.js';
import { IMAGE_TOKENS_HIGH, IMAGE_TOKENS_LOW, promptTokens } from '../../src/limits/prompt-tokens.js';
import { largeTools } from '../helpers/budget-bodies.js';
import { counterFor, encodingFor, MAX_SEGMENT_CHARS, TOKENIZER_BUDGET_CHARS } from '../../src/limits/tokenizers.js';

const plain = { disallowedSpecial: new Set<string>() };
const ENGLISH = 'The gateway reserves an upper bound of every request before it reaches the provider. '.repeat(20);
const CHINESE = '网关在请求到达服务商之前为每个请求预留一个上限，并在响应结束后结算真实用量。'.repeat(20);
const CHINESE_UNBROKEN = '网关在请求到达服务商之前为每个请求预留一个上限并在响应结束后结算真实用量'.repeat(40);

describe('the prompt-token counter', () => {
  it('maps model families to their encodings and leaves the others to bytes', () => {
    expect(
      ['gpt-4o', 'gpt-4o-mini-2024-07-18', 'gpt-4.1', 'o3', 'o4-mini', 'gpt-5.4', 'openai/gpt-5.5'].map(encodingFor),
    ).toEqual(Array(7).fill('o200k_base'));
    expect(['gpt-4', 'gpt-4-turbo', 'gpt-3.5-turbo', 'text-embedding-3-small'].map(encodingFor)).toEqual(
      Array(4).fill('cl100k_base'),
    );
    expect(['claude-sonnet-5', 'gemini-2.5-pro', 'llama-3.3-70b', 'grok-4.7', null].map(encodingFor)).toEqual(
      Array(5).fill(null),
    );
  });

  it('counts English and Chinese exactly with o200k and cl100k, long texts included', async () => {
    const o = await counterFor('gpt-4o');
    const c = await counterFor('gpt-4');
    for (const text of [
      ENGLISH,
      CHINESE,
      'hello <|endoftext|> there',
      `${'word '.repeat(50)}${'x'.repeat(MAX_SEGMENT_CHARS - 1)} end`,
    ]) {
      expect(o(text)).toBe(o200k(text, plain));
      expect(c(text)).toBe(cl100k(text, plain));
    }
  });

  it('never undercounts: overlong pieces count as bytes, and so do unknown tokenizers', async () => {
    const o = await counterFor('gpt-4o');
    expect(o(CHINESE_UNBROKEN)).toBeGreaterThanOrEqual(o200k(CHINESE_UNBROKEN, plain));
    expect(o('a'.repeat(5000))).toBe(5000);
    const claude = await counterFor('claude-sonnet-5');
    for (const text of [ENGLISH, CHINESE, CHINESE_UNBROKEN]) {
      expect(claude(text)).toBe(Buffer.byteLength(text));
      expect(claude(text)).toBeGreaterThanOrEqual(o200k(text, plain));
      expect(claude(text)).toBeGreaterThanOrEqual(cl100k(text, plain));
    }
  });

  it('bounds the tokenizer work of one request, counting the rest as bytes', async () => {
    const o = await counterFor('gpt-4o');
    const text = 'short words only here '.repeat(Math.ceil((TOKENIZER_BUDGET_CHARS * 0.75) / 22));
    expect(o(text)).toBe(o200k(text, plain));
    expect(o(text)).toBe(Buffer.byteLength(text)); // the budget is spent: bytes
    expect(o(`${text}${text}`)).toBe(2 * Buffer.byteLength(text));
  });
});

describe('prompt tokens of a request', () => {
  const ctx = async (model: string) => ({ count: await counterFor(model), model });

  it('counts messages with the chat format overhead, above what the provider reports', async () => {
    const body = {
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: CHINESE },
      ],
    };
    const counted = promptTokens('chatComplete', body, await ctx('gpt-4o'));
    // OpenAI: 3 per message + role + content, 3 to prime the reply.
    const provider = 3 + (3 + 1 + o200k('Be brief.', plain)) + (3 + 1 + o200k(CHINESE, plain));
    expect(counted).toBeGreaterThanOrEqual(provider);
    expect(counted).toBeLessThan(provider + 30);
  });

  it('counts a 40 KB tools definition, tool calls and their results', async () => {
    const tools = largeTools();
    expect(JSON.stringify(tools).length).toBeGreaterThan(38_000);
    const body = {
      model: 'gpt-4o',
      tools,
      messages: [
        { role: 'user', content: 'Find record 7.' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: {
                name: 'lookup_record_7',
                arguments: JSON.stringify({ id: 'r-7', fields: ['name', 'owner'] }),
              },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: JSON.stringify({ name: 'Widget', owner: 'Ann' }) },
      ],
    };
    const counted = promptTokens('chatComplete', body, await ctx('gpt-4o'));
    expect(counted).toBeGreaterThan(o200k(JSON.stringify(tools), plain));
    expect(counted).toBeGreaterThan(
      o200k('lookup_record_7', plain) +
        o200k('{"name":"Widget","owner":"Ann"}', plain) +
        o200k(JSON.stringify(tools), plain),
    );
  });

  it('counts Responses input and instructions, Anthropic system, json_schema, completions prompts and embedding token arrays', async () => {
    const c = await ctx('gpt-4o');
    const schema = {
      type: 'json_schema',
      json_schema: { name: 'answer', schema: { type: 'object', properties: { summary: { type: 'string' } } } },
    };
    const base = promptTokens('chatComplete', { messages: [{ role: 'user', content: 'hi' }] }, c);
    expect(
      promptTokens('chatComplete', { messages: [{ role: 'user', content: 'hi' }], response_format: schema }, c),
    ).toBeGreaterThanOrEqual(base + o200k(JSON.stringify(schema), plain));
    expect(
      promptTokens(
        'chatComplete',
        { messages: [{ role: 'user', content: 'hi' }], system: [{ type: 'text', text: ENGLISH }] },
        c,
      ),
    ).toBeGreaterThan(base + o200k(ENGLISH, plain));
    expect(promptTokens('createModelResponse', { input: ENGLISH, instructions: CHINESE }, c)).toBeGreaterThan(
      o200k(ENGLISH, plain) + o200k(CHINESE, plain),
    );
    expect(
      promptTokens(
        'createModelResponse',
        {
          input: [
            { role: 'user', content: [{ type: 'input_text', text: ENGLISH }] },
            { type: 'function_call_output', call_id: 'c', output: CHINESE },
          ],
        },
        c,
      ),
    ).toBeGreaterThan(o200k(ENGLISH, plain) + o200k(CHINESE, plain));
    expect(promptTokens('complete', { prompt: [ENGLISH, CHINESE] }, c)).toBe(
      o200k(ENGLISH, plain) + o200k(CHINESE, plain),
    );
    expect(
      promptTokens(
        'embed',
        {
          input: [
            [1, 2, 3],
            [4, 5],
          ],
        },
        c,
      ),
    ).toBe(5);
    expect(promptTokens('embed', { input: [1, 2, 3, 4] }, c)).toBe(4);
  });

  it('reserves the most an image can cost for its detail level, without counting its bytes', async () => {
    const c = await ctx('gpt-4o');
    const image = (detail?: string) => ({
      model: 'gpt-4o',
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'image_url',
              image_url: { url: `data:image/png;base64,${'A'.repeat(100_000)}`, ...(detail ? { detail } : {}) },
            },
          ],
        },
      ],
    });
    const empty = promptTokens('chatComplete', { messages: [{ role: 'user', content: [] }] }, c);
    expect(promptTokens('chatComplete', image('low'), c) - empty).toBe(IMAGE_TOKENS_LOW);
    expect(promptTokens('chatComplete', image('high'), c) - empty).toBe(IMAGE_TOKENS_HIGH);
    expect(promptTokens('chatComplete', image(), c) - empty).toBe(IMAGE_TOKENS_HIGH);
    // OpenAI's largest tile count (2048 × 768 → 8 tiles): 85 + 8 × 170.
    expect(IMAGE_TOKENS_HIGH).toBeGreaterThanOrEqual(85 + 8 * 170);
    const mini = await ctx('gpt-4o-mini');
    expect(promptTokens('chatComplete', { ...image(), model: 'gpt-4o-mini' }, mini) - empty).toBe(2_833 + 8 * 5_667);
  });

  // The model is read once per request: a long model name times many parts was quadratic.
  it('prices every image part by the model, however long its name and however many parts', async () => {
    const parts = (n: number) => ({
      messages: [
        { role: 'user', content: Array.from({ length: n }, () => ({ type: 'image_url', image_url: { url: 'x' } })) },
      ],
    });
    const longMini = `${'a/'.repeat(500_000)}gpt-4o-mini`;
    const longOther = `${'a/'.repeat(500_000)}gpt-4o`;
    const empty = promptTokens('chatComplete', parts(0), await ctx(longMini));
    expect(promptTokens('chatComplete', parts(100_000), await ctx(longMini)) - empty).toBe(
      100_000 * (2_833 + 8 * 5_667),
    );
    expect(promptTokens('chatComplete', parts(100_000), await ctx(longOther)) - empty).toBe(
      100_000 * IMAGE_TOKENS_HIGH,
    );
  });
});

describe('the reservation estimate', () => {
  const price = { input: 2.5, output: 10 };

  it('bounds output by the request, per choice, else by the model maximum, else by the default', () => {
    expect(outputBound('chatComplete', { max_tokens: 50 }, 16_384)).toBe(50);
    expect(outputBound('chatComplete', { max_completion_tokens: 50, n: 3 }, 16_384)).toBe(150);
    expect(outputBound('createModelResponse', { max_output_tokens: 70 }, null)).toBe(70);
    expect(outputBound('chatComplete', {}, 16_384)).toBe(16_384);
    expect(outputBound('chatComplete', {}, null)).toBe(128_000);
    expect(outputBound('complete', {}, null)).toBe(16);
    expect(outputBound('embed', { max_tokens: 9 }, null)).toBe(0);
  });

  it('prices prompt and output, bounds bodies it cannot read by their size, and reserves nothing for a GET', async () => {
    const body = { model: 'gpt-4o', messages: [{ role: 'user', content: ENGLISH }], max_tokens: 100 };
    const e = await estimateRequest({
      endpointType: 'chatComplete',
      method: 'POST',
      body,
      bodyBytes: 0,
      model: 'gpt-4o',
      price,
      maxOutputTokens: null,
    });
    expect(e.completionTokens).toBe(100);
    expect(e.tokens).toBe(e.promptTokens + 100);
    expect(e.cost).toBeCloseTo((e.promptTokens * 2.5 + 100 * 10) / 1e6, 12);
    const proxy = await estimateRequest({
      endpointType: 'proxy',
      method: 'POST',
      body: null,
      bodyBytes: 1234,
      model: null,
      price: null,
      maxOutputTokens: null,
    });
    expect(proxy).toMatchObject({ promptTokens: 1234, cost: null });
    expect(
      await estimateRequest({
        endpointType: 'proxy',
        method: 'GET',
        body: null,
        bodyBytes: 0,
        model: null,
        price: null,
        maxOutputTokens: null,
      }),
    ).toMatchObject({ tokens: 0, cost: 0 });
  });

  it('bounds a request by its bytes without the encoding, never below its exact count', async () => {
    const request = (model: string, body: Record<string, unknown>) => ({
      endpointType: 'chatComplete',
      method: 'POST',
      body: { model, ...body },
      bodyBytes: 0,
      model,
      price,
      maxOutputTokens: null,
    });
    for (const body of [
      { messages: [{ role: 'user', content: ENGLISH }], max_tokens: 100 },
      { messages: [{ role: 'user', content: CHINESE_UNBROKEN }], max_tokens: 100 },
      { messages: [{ role: 'user', content: 'Find record 7.' }], tools: largeTools() },
    ]) {
      const bound = boundRequest(request('gpt-4o', body));
      const exact = await bound.exact!();
      expect(exact).toEqual(await estimateRequest(request('gpt-4o', body)));
      expect(bound.bytes.promptTokens).toBeGreaterThan(exact.promptTokens);
      expect(bound.bytes.completionTokens).toBe(exact.completionTokens);
      expect(bound.bytes.cost!).toBeGreaterThan(exact.cost!);
      // Without a public encoding, bytes are the count: nothing to refine.
      const claude = boundRequest(request('claude-sonnet-5', body));
      expect(claude.exact).toBeNull();
      expect(claude.bytes.promptTokens).toBe(bound.bytes.promptTokens);
    }
  });
});
