import { StringDecoder } from 'node:string_decoder';
import type { TokenUsage } from '../../usage.js';
import type { StreamContext, StreamTranslator } from '../types.js';
import { finishReasonOf, isFailedFinish } from './chat-response.js';
import { isObject, type CohereUsage, type Json } from './cohere-types.js';
import { cohereErrorMessage } from './errors.js';
import { createSseReader, type SseEvent } from './sse.js';
import { openAIUsage, usageOf } from './usage.js';

/** The `delta.message` of a Cohere stream event. */
function deltaMessage(event: Json): Json {
  const delta = isObject(event.delta) ? event.delta : {};
  return isObject(delta.message) ? delta.message : {};
}

/**
 * Turns Cohere's v2 chat stream (`event: <type>` + `data: {"type": …}` per event) into
 * `chat.completion.chunk` events: `content-delta` text becomes content, `tool-call-start` /
 * `tool-call-delta` become tool-call deltas (the start carries id and name, the deltas the
 * arguments), `message-end` gives the finish reason and usage. Tool plans and citations have
 * no OpenAI counterpart and are left out. An error event, a `message-end` whose finish reason
 * is ERROR or TIMEOUT, or a stream that stops before `message-end`, ends with an error event
 * and no [DONE].
 */
export function createChatStreamTranslator(ctx: StreamContext): StreamTranslator {
  const decoder = new StringDecoder('utf8');
  const reader = createSseReader();
  let usage: TokenUsage | null = null;
  let error: { message: string; code?: string | undefined } | null = null;
  let ended = false;
  let roleSent = false;
  const toolIndex = new Map<number, number>();

  const frame = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;
  const chunk = (delta: Json, finish: string | null) =>
    frame({
      id: ctx.id,
      object: 'chat.completion.chunk',
      created: ctx.created,
      model: ctx.model ?? '',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
  const withRole = (delta: Json): Json => {
    if (roleSent) return delta;
    roleSent = true;
    return { role: 'assistant', ...delta };
  };
  const fail = (message: string, code?: string): string[] => {
    error = { message, code };
    return [frame({ error: { message, type: 'api_error', param: null, code: code ?? 'UPSTREAM_STREAM_ERROR' } })];
  };

  const translate = (name: string | null, data: string): string[] => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return fail('The provider sent a stream event that is not JSON.');
    }
    if (!isObject(parsed)) return fail('The provider sent a stream event that is not a JSON object.');
    const type = typeof parsed.type === 'string' ? parsed.type : name;
    const message = deltaMessage(parsed);
    switch (type) {
      case 'message-start':
        return [chunk(withRole({ content: '' }), null)];
      case 'content-delta': {
        const content =
          isObject(message.content) && typeof message.content.text === 'string' ? message.content.text : '';
        return content === '' ? [] : [chunk(withRole({ content }), null)];
      }
      case 'tool-call-start': {
        const call = isObject(message.tool_calls) ? message.tool_calls : {};
        const fn = isObject(call.function) ? call.function : {};
        const index = toolIndex.size;
        toolIndex.set(typeof parsed.index === 'number' ? parsed.index : index, index);
        const args = typeof fn.arguments === 'string' ? fn.arguments : '';
        const delta = {
          index,
          id: typeof call.id === 'string' ? call.id : '',
          type: 'function',
          function: { name: typeof fn.name === 'string' ? fn.name : '', arguments: args },
        };
        return [chunk(withRole({ tool_calls: [delta] }), null)];
      }
      case 'tool-call-delta': {
        const call = isObject(message.tool_calls) ? message.tool_calls : {};
        const args =
          isObject(call.function) && typeof call.function.arguments === 'string' ? call.function.arguments : '';
        const index =
          toolIndex.get(typeof parsed.index === 'number' ? parsed.index : -1) ?? Math.max(0, toolIndex.size - 1);
        return args === '' ? [] : [chunk({ tool_calls: [{ index, function: { arguments: args } }] }, null)];
      }
      case 'message-end': {
        const delta = isObject(parsed.delta) ? parsed.delta : {};
        usage = usageOf(delta.usage as CohereUsage | undefined) ?? usage;
        ended = true;
        if (isFailedFinish(delta.finish_reason)) {
          const reason = String(delta.finish_reason);
          return fail(
            typeof delta.error === 'string' && delta.error !== ''
              ? delta.error
              : `The provider ended the stream with finish reason ${reason}.`,
            reason,
          );
        }
        const out = [chunk(roleSent ? {} : withRole({}), finishReasonOf(delta.finish_reason) ?? 'stop')];
        if (ctx.includeUsage && usage)
          out.push(
            frame({
              id: ctx.id,
              object: 'chat.completion.chunk',
              created: ctx.created,
              model: ctx.model ?? '',
              choices: [],
              usage: openAIUsage(usage),
            }),
          );
        return out;
      }
      case 'content-start':
      case 'content-end':
      case 'tool-plan-delta':
      case 'tool-call-end':
      case 'citation-start':
      case 'citation-end':
      case 'debug':
        return [];
      default: {
        const reported = cohereErrorMessage(parsed);
        return reported !== null || type === 'error'
          ? fail(reported ?? 'The provider reported an error in the stream.')
          : [];
      }
    }
  };

  const process = (events: SseEvent[]): string[] => {
    const out: string[] = [];
    for (const event of events) {
      if (error) break;
      out.push(...translate(event.event, event.data));
    }
    return out;
  };

  return {
    push(bytes: Buffer): string[] {
      if (error) return [];
      return process(reader.push(decoder.write(bytes)));
    },
    end(): string[] {
      if (error) return [];
      const out = process(reader.end(decoder.end()));
      if (error) return out;
      if (!ended) return [...out, ...fail('The provider stream ended before message-end.')];
      return [...out, 'data: [DONE]\n\n'];
    },
    get usage() {
      return usage;
    },
    get error() {
      return error;
    },
  };
}
