import { describe, expect, it } from 'vitest';
import { bedrock } from '../../src/providers/adapters/bedrock/index.js';
import { finishReason } from '../../src/providers/adapters/bedrock/chat-response.js';
import type { StreamContext } from '../../src/providers/adapters/types.js';

const adapter = bedrock.adapter!;
const ctx: StreamContext = {
  model: 'anthropic.claude-3-haiku-20240307-v1:0',
  includeUsage: false,
  id: 'chatcmpl-1',
  created: 1700000000,
};

// Shapes of the Converse reference and the tool-use guide (the `top_song` example).
const TEXT_ANSWER = {
  output: {
    message: {
      role: 'assistant',
      content: [{ text: 'The most popular song on WZPZ is ' }, { text: 'Elemental Hotel.' }],
    },
  },
  stopReason: 'end_turn',
  usage: { inputTokens: 125, outputTokens: 60, totalTokens: 185 },
  metrics: { latencyMs: 1175 },
};
const TOOL_ANSWER = {
  output: {
    message: {
      role: 'assistant',
      content: [
        { toolUse: { toolUseId: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', name: 'top_song', input: { sign: 'WZPZ' } } },
      ],
    },
  },
  stopReason: 'tool_use',
  usage: { inputTokens: 375, outputTokens: 54, totalTokens: 429 },
  metrics: { latencyMs: 1000 },
};

describe('Converse → chat.completion', () => {
  it('joins the text blocks and maps usage', () => {
    const { body, usage } = adapter.toOpenAIResponse('chatComplete', TEXT_ANSWER, ctx);
    expect(body).toEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1700000000,
      model: ctx.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'The most popular song on WZPZ is Elemental Hotel.', refusal: null },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 125, completion_tokens: 60, total_tokens: 185 },
    });
    expect(usage).toEqual({ promptTokens: 125, completionTokens: 60, cachedTokens: null, totalTokens: 185 });
  });

  it('turns toolUse blocks into tool_calls with JSON arguments', () => {
    const { body } = adapter.toOpenAIResponse('chatComplete', TOOL_ANSWER, ctx);
    expect((body.choices as any)[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: [
          {
            id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q',
            type: 'function',
            function: { name: 'top_song', arguments: '{"sign":"WZPZ"}' },
          },
        ],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
  });

  it('counts cache reads and writes into prompt_tokens and reports cache reads as cached_tokens', () => {
    const { body, usage } = adapter.toOpenAIResponse(
      'chatComplete',
      {
        ...TEXT_ANSWER,
        usage: {
          inputTokens: 10,
          outputTokens: 5,
          totalTokens: 1215,
          cacheReadInputTokens: 1000,
          cacheWriteInputTokens: 200,
        },
      },
      ctx,
    );
    expect(body.usage).toEqual({
      prompt_tokens: 1210,
      completion_tokens: 5,
      total_tokens: 1215,
      prompt_tokens_details: { cached_tokens: 1000 },
    });
    expect(usage).toEqual({ promptTokens: 1210, completionTokens: 5, cachedTokens: 1000, totalTokens: 1215 });
  });

  it('maps every documented stopReason', () => {
    expect(
      [
        'end_turn',
        'tool_use',
        'max_tokens',
        'stop_sequence',
        'guardrail_intervened',
        'content_filtered',
        'model_context_window_exceeded',
      ].map(finishReason),
    ).toEqual(['stop', 'tool_calls', 'length', 'stop', 'content_filter', 'content_filter', 'length']);
  });
});

describe('embeddings and rerank answers', () => {
  const embedCtx = { ...ctx, model: 'amazon.titan-embed-text-v2:0' };

  it('maps a Titan answer with its token count', () => {
    const { body, usage } = adapter.toOpenAIResponse(
      'embed',
      { embedding: [0.25, -0.5], inputTextTokenCount: 3, embeddingsByType: { float: [0.25, -0.5] } },
      embedCtx,
    );
    expect(body).toEqual({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.25, -0.5] }],
      model: 'amazon.titan-embed-text-v2:0',
      usage: { prompt_tokens: 3, total_tokens: 3 },
    });
    expect(usage).toEqual({ promptTokens: 3, completionTokens: null, cachedTokens: null, totalTokens: 3 });
  });

  it('maps a Cohere answer (floats, or by type) without usage', () => {
    const plain = adapter.toOpenAIResponse(
      'embed',
      {
        embeddings: [
          [1, 2],
          [3, 4],
        ],
        id: 'x',
        response_type: 'embeddings_floats',
        texts: ['a', 'b'],
      },
      embedCtx,
    );
    expect((plain.body.data as any[]).map((d) => [d.index, d.embedding])).toEqual([
      [0, [1, 2]],
      [1, [3, 4]],
    ]);
    expect(plain.usage).toBeNull();
    const byType = adapter.toOpenAIResponse(
      'embed',
      { embeddings: { float: [[5, 6]] }, response_type: 'embeddings_by_type' },
      embedCtx,
    );
    expect((byType.body.data as any[])[0].embedding).toEqual([5, 6]);
  });

  it('encodes base64 (float32, little-endian) when the context asks for it', () => {
    const { body } = adapter.toOpenAIResponse('embed', { embedding: [0.25, -0.5], inputTextTokenCount: 1 }, {
      ...embedCtx,
      encodingFormat: 'base64',
    } as StreamContext);
    const bytes = Buffer.from((body.data as any[])[0].embedding, 'base64');
    expect([bytes.readFloatLE(0), bytes.readFloatLE(4)]).toEqual([0.25, -0.5]);
  });

  it('maps a Rerank answer to the list shape', () => {
    const arn = 'arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0';
    const { body, usage } = adapter.toOpenAIResponse(
      'rerank',
      {
        results: [
          { index: 2, relevanceScore: 0.91 },
          { index: 0, relevanceScore: 0.12, document: { type: 'TEXT', textDocument: { text: 'Paris' } } },
        ],
      },
      { ...ctx, model: arn },
    );
    expect(body).toEqual({
      object: 'list',
      results: [
        { index: 2, relevance_score: 0.91 },
        { index: 0, relevance_score: 0.12, document: { text: 'Paris' } },
      ],
      model: arn,
      usage: null,
    });
    expect(usage).toBeNull();
  });
});

describe('errors', () => {
  const json = (value: unknown) => Buffer.from(JSON.stringify(value));

  it('names the error from x-amzn-errortype when given, and keeps the status', () => {
    const error = (adapter.toOpenAIError as any)(
      403,
      json({ message: 'User is not authorized to perform bedrock:InvokeModel' }),
      { 'x-amzn-errortype': 'AccessDeniedException:http://internal.amazon.com/coral/com.amazon.bedrock/' },
    );
    expect(error).toEqual({
      status: 403,
      message: 'User is not authorized to perform bedrock:InvokeModel',
      type: 'permission_error',
      code: 'AccessDeniedException',
    });
  });

  it('falls back on the documented name of the status', () => {
    expect(
      adapter.toOpenAIError(429, json({ message: 'Too many requests, please wait before trying again.' })),
    ).toEqual({
      status: 429,
      message: 'Too many requests, please wait before trying again.',
      type: 'rate_limit_error',
      code: 'ThrottlingException',
    });
    expect(adapter.toOpenAIError(400, json({ message: 'Malformed input request' }))).toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      code: 'ValidationException',
    });
    expect(adapter.toOpenAIError(503, Buffer.from('<html>'))).toEqual({
      status: 503,
      message: 'Bedrock answered with HTTP 503 (ServiceUnavailableException).',
      type: 'api_error',
      code: 'ServiceUnavailableException',
    });
    expect(
      adapter.toOpenAIError(
        403,
        json({
          __type: 'com.amazon.coral.service#UnrecognizedClientException',
          message: 'The security token included in the request is invalid.',
        }),
      ),
    ).toMatchObject({ type: 'authentication_error', code: 'UnrecognizedClientException' });
  });

  it('cuts the canonical request (which may hold a session token) off a signature mismatch message', () => {
    const message =
      "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.\n\nThe Canonical String for this request should have been\n'POST\n/model/x/converse\n\nhost:bedrock-runtime.us-east-1.amazonaws.com\nx-amz-security-token:SESSION-SECRET\n'";
    const error = adapter.toOpenAIError(403, json({ message }));
    expect(error.message).toBe(
      'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    );
    expect(error.message).not.toContain('SESSION-SECRET');
  });
});
