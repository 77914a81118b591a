import { describe, expect, it } from 'vitest';
import { Agent } from 'undici';
import { bedrock } from '../../src/providers/adapters/bedrock/index.js';
import { toConverseRequest } from '../../src/providers/adapters/bedrock/chat-request.js';
import { toEmbeddingRequest } from '../../src/providers/adapters/bedrock/embeddings.js';
import { rerankModelArn, toRerankRequest } from '../../src/providers/adapters/bedrock/rerank.js';
import type { AdapterContext } from '../../src/providers/adapters/types.js';
import { AppError } from '../../src/lib/errors.js';

const adapter = bedrock.adapter!;
const provider = bedrock.providers[0]!;
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
// The example credentials of the AWS documentation.
const KEYS = {
  'x-service-aws-access-key-id': 'AKIDEXAMPLE',
  'x-service-aws-secret-access-key': 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  'x-service-aws-region': 'us-east-1',
};

function ctx(
  overrides: {
    headers?: Record<string, string>;
    apiKey?: string | null;
    customHost?: string | null;
    configurations?: Record<string, unknown>;
  } = {},
): AdapterContext {
  return {
    provider,
    target: {
      apiKey: overrides.apiKey ?? null,
      customHost: overrides.customHost ?? null,
      ...(overrides.configurations ? { configurations: overrides.configurations } : {}),
    },
    options: {},
    headers: overrides.headers ?? {},
    dispatcher: new Agent(),
    now: () => Date.UTC(2015, 7, 30, 12, 36, 0),
  };
}

describe('bedrock provider definition', () => {
  it('is an adapted provider with chat, embeddings and rerank', () => {
    expect(provider).toMatchObject({ name: 'bedrock', wireFormat: 'bedrock', auth: { kind: 'adapter' } });
    expect([...provider.endpoints].sort()).toEqual(['chatComplete', 'embed', 'proxy', 'rerank']);
    expect([...adapter.endpoints].sort()).toEqual(['chatComplete', 'embed', 'rerank']);
  });
});

describe('OpenAI chat → Converse', () => {
  it('moves system messages to system and maps inference parameters', () => {
    const out = toConverseRequest({
      model: 'anthropic.claude-3-haiku-20240307-v1:0',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: 'Hello' },
      ],
      max_completion_tokens: 512,
      temperature: 0.5,
      top_p: 0.9,
      stop: ['END'],
      seed: 4,
    });
    expect(out).toEqual({
      system: [{ text: 'You are terse.' }, { text: 'Answer in French.' }],
      messages: [{ role: 'user', content: [{ text: 'Hello' }] }],
      inferenceConfig: { maxTokens: 512, temperature: 0.5, topP: 0.9, stopSequences: ['END'] },
    });
  });

  it('takes max_tokens and a single stop string too', () => {
    const out = toConverseRequest({ messages: [{ role: 'user', content: 'x' }], max_tokens: 10, stop: 'STOP' });
    expect(out.inferenceConfig).toEqual({ maxTokens: 10, stopSequences: ['STOP'] });
  });

  it('turns a data: URL image part into an image block with its bytes', () => {
    const out = toConverseRequest({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_1X1}` } },
          ],
        },
      ],
    });
    expect(out.messages).toEqual([
      { role: 'user', content: [{ text: 'What is this?' }, { image: { format: 'png', source: { bytes: PNG_1X1 } } }] },
    ]);
    const jpeg = toConverseRequest({
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/jpg;base64,AAAA' } }] }],
    });
    expect((jpeg.messages as any)[0].content[0].image.format).toBe('jpeg');
  });

  it('refuses image URLs Bedrock would have to fetch', () => {
    expect(() =>
      toConverseRequest({
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] },
        ],
      }),
    ).toThrow(/data: URLs/);
  });

  it('translates tools, tool_choice and a whole tool round trip', () => {
    const out = toConverseRequest({
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'tooluse_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'tooluse_1', content: '18°C and sunny' },
        { role: 'user', content: 'Thanks, and tomorrow?' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Current weather',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        },
      ],
      tool_choice: 'required',
    });
    expect(out.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: [{ toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } } }],
      },
      // The tool result and the next user message share one user turn: Converse alternates roles.
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 'tooluse_1', content: [{ text: '18°C and sunny' }] } },
          { text: 'Thanks, and tomorrow?' },
        ],
      },
    ]);
    expect(out.toolConfig).toEqual({
      tools: [
        {
          toolSpec: {
            name: 'get_weather',
            description: 'Current weather',
            inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
          },
        },
      ],
      toolChoice: { any: {} },
    });
  });

  it('maps every tool_choice form', () => {
    const tools = [{ type: 'function', function: { name: 'f' } }];
    const base = { messages: [{ role: 'user', content: 'x' }], tools };
    expect(toConverseRequest({ ...base, tool_choice: 'auto' }).toolConfig).toMatchObject({ toolChoice: { auto: {} } });
    expect(
      toConverseRequest({ ...base, tool_choice: { type: 'function', function: { name: 'f' } } }).toolConfig,
    ).toMatchObject({ toolChoice: { tool: { name: 'f' } } });
    expect(toConverseRequest({ ...base, tool_choice: 'none' }).toolConfig).toBeUndefined();
    expect((toConverseRequest(base).toolConfig as any).tools[0].toolSpec.inputSchema).toEqual({
      json: { type: 'object', properties: {} },
    });
  });

  it('forwards native Bedrock fields and refuses what it cannot translate', () => {
    const out = toConverseRequest({
      messages: [{ role: 'user', content: 'x' }],
      additionalModelRequestFields: { top_k: 5 },
    });
    expect(out.additionalModelRequestFields).toEqual({ top_k: 5 });
    expect(() => toConverseRequest({ messages: [{ role: 'user', content: 'x' }], n: 2 })).toThrow(AppError);
    expect(() => toConverseRequest({ messages: [{ role: 'function', content: 'x' }] })).toThrow(/role 'function'/);
    expect(() =>
      toConverseRequest({
        messages: [{ role: 'assistant', tool_calls: [{ id: 'a', function: { name: 'f', arguments: '{oops' } }] }],
      }),
    ).toThrow(/JSON/);
  });
});

describe('embeddings and rerank bodies', () => {
  it('builds Titan v2, Titan v1 and Cohere InvokeModel bodies', () => {
    expect(toEmbeddingRequest({ input: 'hello world', dimensions: 256 }, 'amazon.titan-embed-text-v2:0')).toEqual({
      inputText: 'hello world',
      dimensions: 256,
    });
    expect(toEmbeddingRequest({ input: ['hello'], dimensions: 256 }, 'amazon.titan-embed-text-v1')).toEqual({
      inputText: 'hello',
    });
    expect(toEmbeddingRequest({ input: ['a', 'b'], input_type: 'search_query' }, 'cohere.embed-english-v3')).toEqual({
      texts: ['a', 'b'],
      input_type: 'search_query',
    });
    expect(toEmbeddingRequest({ input: 'a' }, 'cohere.embed-multilingual-v3')).toEqual({
      texts: ['a'],
      input_type: 'search_document',
    });
    expect(() => toEmbeddingRequest({ input: ['a', 'b'] }, 'amazon.titan-embed-text-v2:0')).toThrow(/one input/);
    expect(() => toEmbeddingRequest({ input: [1, 2] }, 'cohere.embed-english-v3')).toThrow(/token ids/);
    expect(() => toEmbeddingRequest({ input: 'a' }, 'meta.llama3')).toThrow(/Titan text/);
  });

  it('builds the Agent Runtime Rerank body from an ARN model', () => {
    const arn = 'arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0';
    expect(rerankModelArn(arn, 'eu-central-1')).toBe(arn);
    expect(rerankModelArn('cohere.rerank-v3-5:0', 'us-west-2')).toBe(
      'arn:aws:bedrock:us-west-2::foundation-model/cohere.rerank-v3-5:0',
    );
    expect(
      toRerankRequest(
        {
          query: 'capital of France',
          documents: ['Paris is the capital.', { text: 'Berlin' }, { title: 'x', body: 'y' }],
          top_n: 2,
        },
        arn,
      ),
    ).toEqual({
      queries: [{ type: 'TEXT', textQuery: { text: 'capital of France' } }],
      sources: [
        { type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text: 'Paris is the capital.' } } },
        { type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text: 'Berlin' } } },
        { type: 'INLINE', inlineDocumentSource: { type: 'JSON', jsonDocument: { title: 'x', body: 'y' } } },
      ],
      rerankingConfiguration: {
        type: 'BEDROCK_RERANKING_MODEL',
        bedrockRerankingConfiguration: { numberOfResults: 2, modelConfiguration: { modelArn: arn } },
      },
    });
  });
});

describe('buildRequest', () => {
  const chat = { model: 'anthropic.claude-3-haiku-20240307-v1:0', messages: [{ role: 'user', content: 'Hi' }] };

  it('signs a Converse call to the regional host, model id encoded in the path', async () => {
    const req = await adapter.buildRequest('chatComplete', chat, ctx({ headers: KEYS }));
    expect(req.url).toBe(
      'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse',
    );
    expect(req.method).toBe('POST');
    expect(req.headers).toMatchObject({
      host: 'bedrock-runtime.us-east-1.amazonaws.com',
      'content-type': 'application/json',
      'x-amz-date': '20150830T123600Z',
    });
    expect(req.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20150830\/us-east-1\/bedrock\/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=[0-9a-f]{64}$/,
    );
    expect(JSON.parse(String(req.body))).toEqual({ messages: [{ role: 'user', content: [{ text: 'Hi' }] }] });
  });

  it('streams through converse-stream, signs the custom host with its port, and signs the session token', async () => {
    const req = await adapter.buildRequest(
      'chatComplete',
      { ...chat, stream: true },
      ctx({
        headers: { ...KEYS, 'x-service-aws-session-token': 'session-token-1' },
        customHost: 'http://127.0.0.1:4567/',
      }),
    );
    expect(req.url).toBe('http://127.0.0.1:4567/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream');
    expect(req.headers).toMatchObject({ host: '127.0.0.1:4567', 'x-amz-security-token': 'session-token-1' });
    expect(req.headers.authorization).toContain('SignedHeaders=content-type;host;x-amz-date;x-amz-security-token,');
  });

  it('prefers stored configurations over headers, and AWS keys over a bearer key', async () => {
    const configurations = {
      aws_access_key_id: 'AKIDSTORED',
      aws_secret_access_key: 'stored-secret',
      aws_region: 'eu-west-3',
    };
    const req = await adapter.buildRequest(
      'chatComplete',
      chat,
      ctx({ headers: KEYS, apiKey: 'bedrock-api-key', configurations }),
    );
    expect(req.url.startsWith('https://bedrock-runtime.eu-west-3.amazonaws.com/')).toBe(true);
    expect(req.headers.authorization).toContain('Credential=AKIDSTORED/20150830/eu-west-3/bedrock/aws4_request');
  });

  it('uses a Bedrock API key as a bearer token when no AWS keys are given', async () => {
    const req = await adapter.buildRequest(
      'embed',
      { model: 'amazon.titan-embed-text-v2:0', input: 'x' },
      ctx({ headers: { 'x-service-aws-region': 'us-west-2' }, apiKey: 'bedrock-api-key' }),
    );
    expect(req.url).toBe('https://bedrock-runtime.us-west-2.amazonaws.com/model/amazon.titan-embed-text-v2%3A0/invoke');
    expect(req.headers).toEqual({ 'content-type': 'application/json', authorization: 'Bearer bedrock-api-key' });
    await expect(
      adapter.buildRequest(
        'rerank',
        { model: 'amazon.rerank-v1:0', query: 'q', documents: ['d'] },
        ctx({ headers: { 'x-service-aws-region': 'us-west-2' }, apiKey: 'k' }),
      ),
    ).rejects.toThrow(/API keys do not work with the Rerank API/);
  });

  it('sends rerank to the agent runtime host', async () => {
    const req = await adapter.buildRequest(
      'rerank',
      { model: 'arn:aws:bedrock:us-east-1::foundation-model/amazon.rerank-v1:0', query: 'q', documents: ['d'] },
      ctx({ headers: KEYS }),
    );
    expect(req.url).toBe('https://bedrock-agent-runtime.us-east-1.amazonaws.com/rerank');
  });

  it('refuses a missing region, half a key pair, a region that is not one, and no credentials at all, naming no secret', async () => {
    const noRegion = { ...KEYS, 'x-service-aws-region': '' };
    await expect(adapter.buildRequest('chatComplete', chat, ctx({ headers: noRegion }))).rejects.toThrow(
      /needs an AWS region/,
    );
    await expect(
      adapter.buildRequest(
        'chatComplete',
        chat,
        ctx({ headers: { 'x-service-aws-access-key-id': 'AKID', 'x-service-aws-region': 'us-east-1' } }),
      ),
    ).rejects.toThrow(/need both/);
    await expect(
      adapter.buildRequest('chatComplete', chat, ctx({ headers: { ...KEYS, 'x-service-aws-region': 'evil.com/x' } })),
    ).rejects.toThrow(/not a region name/);
    const error = await adapter
      .buildRequest('chatComplete', chat, ctx({ headers: { 'x-service-aws-region': 'us-east-1' } }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('PROVIDER_CONFIG');
    const wrong = await adapter
      .buildRequest(
        'chatComplete',
        chat,
        ctx({
          headers: {
            'x-service-aws-access-key-id': 'AKID',
            'x-service-aws-secret-access-key': 'very-secret',
            'x-service-aws-region': 'nope',
          },
        }),
      )
      .catch((e: Error) => e);
    expect(String((wrong as Error).message)).not.toContain('very-secret');
  });

  it('offers no pass-through', async () => {
    expect(await adapter.passThrough!('/model/x/invoke', 'POST', ctx({ headers: KEYS }))).toBeNull();
  });
});
