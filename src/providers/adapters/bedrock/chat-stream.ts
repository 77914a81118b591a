import type { TokenUsage } from '../../usage.js';
import type { StreamContext, StreamTranslator } from '../types.js';
import { finishReason, readUsage } from './chat-response.js';
import { errorTypeFor, exceptionName } from './errors.js';
import { EventStreamReader, type StreamMessage } from './event-stream.js';

type Json = Record<string, unknown>;

const DONE = 'data: [DONE]\n\n';
const sse = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;

/**
 * ConverseStream (binary event-stream frames) → OpenAI `chat.completion.chunk` events:
 * messageStart gives the role, contentBlockStart/Delta give text and tool calls (a tool call's
 * arguments arrive as JSON fragments), messageStop the finish reason, metadata the usage (sent
 * as the last chunk only when the client asked for it). An exception frame ends the stream
 * with an error event and no [DONE].
 */
export function createConverseStreamTranslator(ctx: StreamContext): StreamTranslator {
  const reader = new EventStreamReader();
  const toolIndexByBlock = new Map<number, number>();
  let usage: TokenUsage | null = null;
  let error: { message: string; code?: string | undefined } | null = null;
  let stopped = false;

  const chunk = (delta: Json, finish: string | null = null) =>
    sse({
      id: ctx.id,
      object: 'chat.completion.chunk',
      created: ctx.created,
      model: ctx.model ?? '',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });

  const fail = (message: string, code: string | undefined, type: string): string[] => {
    error = { message, code };
    return [sse({ error: { message, type, param: null, code: code ?? 'UPSTREAM_STREAM_ERROR' } })];
  };

  const onEvent = (name: string | undefined, event: Json): string[] => {
    switch (name) {
      case 'messageStart':
        return [chunk({ role: 'assistant', content: '' })];
      case 'contentBlockStart': {
        const toolUse = (event.start as Json | undefined)?.toolUse as Json | undefined;
        if (!toolUse) return [];
        const index = toolIndexByBlock.size;
        toolIndexByBlock.set(Number(event.contentBlockIndex), index);
        return [
          chunk({
            tool_calls: [
              { index, id: toolUse.toolUseId, type: 'function', function: { name: toolUse.name, arguments: '' } },
            ],
          }),
        ];
      }
      case 'contentBlockDelta': {
        const delta = (event.delta ?? {}) as Json;
        if (typeof delta.text === 'string') return [chunk({ content: delta.text })];
        const input = (delta.toolUse as Json | undefined)?.input;
        const index = toolIndexByBlock.get(Number(event.contentBlockIndex));
        if (typeof input === 'string' && index !== undefined)
          return [chunk({ tool_calls: [{ index, function: { arguments: input } }] })];
        return []; // reasoning and citation deltas have no place in chat.completion.chunk
      }
      case 'messageStop':
        stopped = true;
        return [chunk({}, finishReason(event.stopReason))];
      case 'metadata': {
        const read = readUsage(event.usage);
        if (!read) return [];
        usage = read.usage;
        return ctx.includeUsage
          ? [
              sse({
                id: ctx.id,
                object: 'chat.completion.chunk',
                created: ctx.created,
                model: ctx.model ?? '',
                choices: [],
                usage: read.body,
              }),
            ]
          : [];
      }
      default:
        return []; // contentBlockStop, and events added later
    }
  };

  const onMessage = (message: StreamMessage): string[] => {
    const kind = message.headers[':message-type'];
    const payload = (typeof message.payload === 'object' && message.payload !== null ? message.payload : {}) as Json;
    if (kind === 'event') return onEvent(message.headers[':event-type'], payload);
    if (kind === 'exception') {
      const name = exceptionName(message.headers[':exception-type']);
      const text =
        typeof payload.message === 'string'
          ? payload.message
          : typeof message.payload === 'string'
            ? message.payload
            : `Bedrock reported ${name ?? 'an exception'} in the stream.`;
      return fail(text, name, errorTypeFor(name, null));
    }
    if (kind === 'error') {
      return fail(
        message.headers[':error-message'] ?? 'Bedrock reported an error in the stream.',
        message.headers[':error-code'],
        'api_error',
      );
    }
    return [];
  };

  return {
    push(bytes) {
      if (error) return [];
      let messages: StreamMessage[];
      try {
        messages = reader.push(bytes);
      } catch {
        return fail("The provider's event stream could not be decoded.", 'UPSTREAM_STREAM_ERROR', 'api_error');
      }
      const out: string[] = [];
      for (const message of messages) {
        out.push(...onMessage(message));
        if (error) break;
      }
      return out;
    },
    end() {
      if (error) return [];
      if (reader.leftover > 0 || !stopped)
        return fail(
          "The provider's stream ended before the message was complete.",
          'UPSTREAM_STREAM_ERROR',
          'api_error',
        );
      return [DONE];
    },
    get usage() {
      return usage;
    },
    get error() {
      return error;
    },
  };
}
