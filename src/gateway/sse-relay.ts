import { Transform, type TransformCallback } from 'node:stream';
import { usageFromBody, type TokenUsage } from '../providers/usage.js';

export interface SseRelayOptions {
  /** Drop the usage-only chunk (`choices: []`) that the gateway asked for on the client's behalf. */
  dropUsageOnlyChunk: boolean;
  /** Bytes of the stream to keep for the request log (0 keeps none). */
  captureBytes: number;
  onFirstChunk: () => void;
}

export interface SseRelayResult {
  usage: TokenUsage | null;
  sawDone: boolean;
  captured: string;
  /** The model the provider named in its first chunks (what actually served the request). */
  model: string | null;
}

const EVENT_END = /\r?\n\r?\n/;
const endsWithEvent = (chunk: Buffer) =>
  chunk.length >= 2 &&
  chunk[chunk.length - 1] === 0x0a &&
  (chunk[chunk.length - 2] === 0x0a ||
    (chunk.length >= 4 && chunk[chunk.length - 3] === 0x0a && chunk[chunk.length - 2] === 0x0d));
const mayCarryUsage = (chunk: Buffer) => chunk.includes('"usage":{') || chunk.includes('"usage": {');

/** Only events whose usage is an object are parsed; `"usage": null` on every chunk is skipped cheaply. */
const HAS_USAGE = /"usage"\s*:\s*\{/;
const MODEL = /"model"\s*:\s*"([^"\\]{1,256})"/;
/** Chunks searched for the model: it is in the first one when the provider names it at all. */
const MODEL_CHUNKS = 3;

/**
 * Relays a server-sent-event stream event by event as it arrives, reading the usage from the
 * events that carry it. Nothing is held back but a partial event at a chunk boundary.
 */
export function createSseRelay(options: SseRelayOptions): {
  stream: Transform;
  result: SseRelayResult;
  fail(error: { message: string; type: string; code: string }): void;
} {
  const result: SseRelayResult = { usage: null, sawDone: false, captured: '', model: null };
  let partial = '';
  let first = true;
  let modelChunks = 0;

  const keep = (text: string) => {
    if (result.captured.length < options.captureBytes)
      result.captured += text.slice(0, options.captureBytes - result.captured.length);
  };

  /** Returns the event's text to forward, or '' to drop it. */
  const inspect = (event: string): string => {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.charAt(5) === ' ' ? 6 : 5))
      .join('\n');
    if (data === '[DONE]') result.sawDone = true;
    else if (HAS_USAGE.test(data)) {
      try {
        const parsed = JSON.parse(data) as { choices?: unknown[] };
        result.usage = usageFromBody(parsed) ?? result.usage;
        if (options.dropUsageOnlyChunk && Array.isArray(parsed.choices) && parsed.choices.length === 0) return '';
      } catch {
        // not JSON: forward as it came
      }
    }
    return event;
  };

  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      if (first) {
        first = false;
        options.onFirstChunk();
      }
      if (result.model === null && modelChunks++ < MODEL_CHUNKS)
        result.model = MODEL.exec(chunk.toString('utf8'))?.[1] ?? null;
      // Fast path: whole events without usage pass through as the provider's own bytes.
      if (partial === '' && endsWithEvent(chunk) && !mayCarryUsage(chunk)) {
        if (chunk.includes('data: [DONE]')) result.sawDone = true;
        if (options.captureBytes > 0) keep(chunk.toString('utf8'));
        this.push(chunk);
        callback();
        return;
      }
      const text = partial + chunk.toString('utf8');
      const events = text.split(EVENT_END);
      partial = events.pop() ?? '';
      let out = '';
      for (const event of events) {
        const kept = event.length > 0 ? inspect(event) : '';
        if (kept !== '') out += `${kept}\n\n`;
      }
      if (out.length > 0) {
        keep(out);
        this.push(out);
      }
      callback();
    },
    flush(callback: TransformCallback) {
      if (partial.trim().length > 0) {
        const kept = inspect(partial);
        if (kept !== '') this.push(`${kept}\n\n`);
      }
      partial = '';
      callback();
    },
  });

  return {
    stream,
    result,
    /** Ends the client's stream with an error event (never a clean `[DONE]`) after an upstream failure. */
    fail(error) {
      if (stream.writableEnded || stream.destroyed) return;
      partial = ''; // a half-received event is dropped rather than sent broken
      stream.push(`data: ${JSON.stringify({ error: { ...error, param: null } })}\n\n`);
      stream.end();
    },
  };
}
