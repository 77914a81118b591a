import { StringDecoder } from 'node:string_decoder';
import type { TokenUsage } from '../../usage.js';
import { SseBlockSplitter } from '../shared/sse-blocks.js';
import type { StreamContext, StreamTranslator } from '../types.js';
import { finishReasonOf, openAIUsage, splitParts, usageOf } from './chat-response.js';
import { googleErrorOf, openAIErrorType } from './errors.js';
import { isObject, type GeminiUsageMetadata, type GenerateContentResponse, type Json } from './gemini-types.js';

/** The `data:` lines of one SSE block joined, or null when it has none (a comment, say). */
function dataOf(block: string): string | null {
  const data = block
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
  return data.length > 0 ? data.join('\n') : null;
}

const eventsOf = (blocks: string[]): string[] => blocks.map(dataOf).filter((data): data is string => data !== null);

/** The `data:` payloads of the complete SSE events in `buffer`, and what is left of it. */
export function takeSseEvents(buffer: string, final = false): { events: string[]; rest: string } {
  const splitter = new SseBlockSplitter();
  if (final) return { events: eventsOf(splitter.end(buffer)), rest: '' };
  return { events: eventsOf(splitter.push(buffer)), rest: splitter.rest };
}

/**
 * Turns `streamGenerateContent?alt=sse` (one `GenerateContentResponse` per event, usage on the
 * last) into `chat.completion.chunk` events. Gemini sends each function call whole, so each
 * becomes one tool-call delta with its full arguments. An `{ error }` event ends the stream
 * with an error event and no [DONE].
 */
export function createChatStreamTranslator(ctx: StreamContext): StreamTranslator {
  const decoder = new StringDecoder('utf8');
  const splitter = new SseBlockSplitter();
  let usage: TokenUsage | null = null;
  let metadata: GeminiUsageMetadata | undefined;
  let error: { message: string; code?: string | undefined } | null = null;
  let model = ctx.model ?? '';
  const started = new Set<number>();
  const toolCallCount = new Map<number, number>();

  const frame = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;
  const chunk = (choices: Json[]) =>
    frame({ id: ctx.id, object: 'chat.completion.chunk', created: ctx.created, model, choices });
  const choice = (index: number, delta: Json, finish: string | null) => ({
    index,
    delta,
    logprobs: null,
    finish_reason: finish,
  });

  const fail = (message: string, code: string | undefined, status: number): string[] => {
    error = { message, code };
    return [frame({ error: { message, type: openAIErrorType(status), param: null, code: code ?? null } })];
  };

  const translate = (data: string): string[] => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return fail('The provider sent a stream event that is not JSON.', undefined, 502);
    }
    const upstreamError = googleErrorOf(parsed);
    if (upstreamError) {
      const status = typeof upstreamError.code === 'number' ? upstreamError.code : 500;
      return fail(
        upstreamError.message ?? 'The provider reported an error in the stream.',
        upstreamError.status,
        status,
      );
    }
    const response = (isObject(parsed) ? parsed : {}) as GenerateContentResponse;
    if (typeof response.modelVersion === 'string') model = response.modelVersion;
    if (isObject(response.usageMetadata)) {
      metadata = response.usageMetadata;
      usage = usageOf(metadata);
    }
    const out: string[] = [];
    const candidates = Array.isArray(response.candidates) ? response.candidates : [];
    candidates.forEach((candidate, position) => {
      const index = typeof candidate.index === 'number' ? candidate.index : position;
      const { text, toolCalls } = splitParts(candidate.content?.parts);
      const delta: Json = {};
      if (!started.has(index)) {
        started.add(index);
        delta.role = 'assistant';
      }
      if (text !== '') delta.content = text;
      if (toolCalls.length > 0) {
        const first = toolCallCount.get(index) ?? 0;
        delta.tool_calls = toolCalls.map((call, i) => ({ index: first + i, ...call }));
        toolCallCount.set(index, first + toolCalls.length);
      }
      const hasBody = delta.content !== undefined || delta.tool_calls !== undefined;
      const finish = finishReasonOf(candidate.finishReason, (toolCallCount.get(index) ?? 0) > 0);
      if (hasBody || (!finish && delta.role)) out.push(chunk([choice(index, delta, null)]));
      if (finish) out.push(chunk([choice(index, hasBody ? {} : delta, finish)]));
    });
    if (candidates.length === 0 && response.promptFeedback?.blockReason) {
      started.add(0);
      out.push(chunk([choice(0, { role: 'assistant' }, 'content_filter')]));
    }
    return out;
  };

  const process = (blocks: string[]): string[] => {
    const out: string[] = [];
    for (const data of eventsOf(blocks)) {
      if (error) break;
      out.push(...translate(data));
    }
    return out;
  };

  return {
    push(bytes: Buffer): string[] {
      if (error) return [];
      return process(splitter.push(decoder.write(bytes)));
    },
    end(): string[] {
      if (error) return [];
      const out = process(splitter.end(decoder.end()));
      if (error) return out;
      if (ctx.includeUsage && usage)
        out.push(
          frame({
            id: ctx.id,
            object: 'chat.completion.chunk',
            created: ctx.created,
            model,
            choices: [],
            usage: openAIUsage(usage, metadata),
          }),
        );
      out.push('data: [DONE]\n\n');
      return out;
    },
    get usage() {
      return usage;
    },
    get error() {
      return error;
    },
  };
}
