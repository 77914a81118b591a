import type { TokenUsage } from '../../usage.js';
import type { StreamContext, StreamTranslator } from '../types.js';
import { streamError } from './errors.js';
import { createSseParser, type SseEvent } from './sse-parser.js';
import { finishReason, openAIUsage, tokenUsage } from './usage-and-finish.js';
import { isObject, type AnthropicUsage, type Json } from './wire-types.js';

/** 'chat' emits `chat.completion.chunk`s, 'text' legacy `text_completion` chunks. */
export type ChunkShape = 'chat' | 'text';

const DONE = 'data: [DONE]\n\n';
const sse = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;

/**
 * Turns Anthropic's stream (`message_start`, content blocks, `message_delta`, `message_stop`,
 * with `ping` and `error` among them) into OpenAI chunks as each event completes. Tool-use
 * blocks become `tool_calls` deltas numbered in order of appearance; their `input_json_delta`
 * fragments are forwarded as `arguments` fragments, which is how OpenAI streams them too.
 * `[DONE]` follows `message_stop` only; an `error` event, or a stream that ends before
 * `message_stop`, ends the client's stream with an error event instead.
 */
export function createAnthropicStreamTranslator(shape: ChunkShape, ctx: StreamContext): StreamTranslator {
  const parser = createSseParser();
  const usage: AnthropicUsage = {};
  const toolIndexByBlock = new Map<number, number>();
  let model = ctx.model;
  let finished = false;
  let error: StreamTranslator['error'] = null;

  const chunk = (
    delta: { text?: string; role?: string; tool_calls?: Json[] },
    finish: string | null = null,
  ): string => {
    const base = {
      id: ctx.id,
      object: shape === 'chat' ? 'chat.completion.chunk' : 'text_completion',
      created: ctx.created,
      model,
    };
    if (shape === 'text')
      return sse({ ...base, choices: [{ text: delta.text ?? '', index: 0, logprobs: null, finish_reason: finish }] });
    const chatDelta: Json = {};
    if (delta.role) chatDelta.role = delta.role;
    if (delta.text !== undefined) chatDelta.content = delta.text;
    if (delta.tool_calls) chatDelta.tool_calls = delta.tool_calls;
    return sse({ ...base, choices: [{ index: 0, delta: chatDelta, logprobs: null, finish_reason: finish }] });
  };

  const fail = (message: string, type: string, code: string | undefined): string[] => {
    error = { message, code };
    return [sse({ error: { message, type, param: null, code: code ?? null } })];
  };

  const mergeUsage = (value: unknown) => {
    if (!isObject(value)) return;
    for (const [name, amount] of Object.entries(value))
      if (typeof amount === 'number') (usage as Record<string, number>)[name] = amount;
  };

  const handle = ({ event, data: raw }: SseEvent): string[] => {
    let data: Json;
    try {
      const parsed: unknown = JSON.parse(raw);
      data = isObject(parsed) ? parsed : {};
    } catch {
      return []; // not an Anthropic event (a proxy's comment or keep-alive): nothing to say
    }
    switch (typeof data.type === 'string' ? data.type : event) {
      case 'message_start': {
        const message = isObject(data.message) ? data.message : {};
        if (typeof message.model === 'string') model = message.model;
        mergeUsage(message.usage);
        return shape === 'chat' ? [chunk({ role: 'assistant', text: '' })] : [];
      }
      case 'content_block_start':
        return blockStart(data);
      case 'content_block_delta':
        return blockDelta(data);
      case 'message_delta': {
        mergeUsage(data.usage);
        const delta = isObject(data.delta) ? data.delta : {};
        const finish = finishReason(typeof delta.stop_reason === 'string' ? delta.stop_reason : null);
        return finish ? [chunk({}, finish)] : [];
      }
      case 'message_stop': {
        finished = true;
        const counted = tokenUsage(usage);
        const last =
          ctx.includeUsage && counted
            ? [
                sse({
                  id: ctx.id,
                  object: shape === 'chat' ? 'chat.completion.chunk' : 'text_completion',
                  created: ctx.created,
                  model,
                  choices: [],
                  usage: openAIUsage(counted),
                }),
              ]
            : [];
        return [...last, DONE];
      }
      case 'error': {
        const failure = streamError(data);
        return fail(failure.message, failure.type, failure.code);
      }
      default: // ping, content_block_stop and event types added later
        return [];
    }
  };

  const blockStart = (data: Json): string[] => {
    const block = isObject(data.content_block) ? data.content_block : {};
    if (block.type === 'text' && typeof block.text === 'string' && block.text !== '')
      return [chunk({ text: block.text })];
    if (block.type !== 'tool_use' || shape !== 'chat' || typeof data.index !== 'number') return [];
    const toolIndex = toolIndexByBlock.size;
    toolIndexByBlock.set(data.index, toolIndex);
    const input = isObject(block.input) && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : '';
    return [
      chunk({
        tool_calls: [
          { index: toolIndex, id: block.id, type: 'function', function: { name: block.name, arguments: input } },
        ],
      }),
    ];
  };

  const blockDelta = (data: Json): string[] => {
    const delta = isObject(data.delta) ? data.delta : {};
    if (delta.type === 'text_delta' && typeof delta.text === 'string') return [chunk({ text: delta.text })];
    if (delta.type !== 'input_json_delta' || typeof delta.partial_json !== 'string' || delta.partial_json === '')
      return [];
    const toolIndex = typeof data.index === 'number' ? toolIndexByBlock.get(data.index) : undefined;
    return toolIndex === undefined
      ? []
      : [chunk({ tool_calls: [{ index: toolIndex, function: { arguments: delta.partial_json } }] })];
  };

  const run = (events: SseEvent[]): string[] => {
    const out: string[] = [];
    for (const event of events) {
      if (error || finished) break;
      out.push(...handle(event));
    }
    return out;
  };

  return {
    push: (bytes) => run(parser.push(bytes)),
    end() {
      const out = run(parser.end());
      if (!finished && !error)
        out.push(...fail("The provider's stream ended before message_stop.", 'api_error', 'UPSTREAM_STREAM_ERROR'));
      return out;
    },
    get usage(): TokenUsage | null {
      return tokenUsage(usage);
    },
    get error() {
      return error;
    },
  };
}
