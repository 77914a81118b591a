import { Readable } from 'node:stream';
import { usageFromBody, type TokenUsage } from '../providers/usage.js';

export interface SseReaderOptions {
  /** Drop the usage-only chunk (`choices: []`) that the gateway asked for on the client's behalf. */
  dropUsageOnlyChunk: boolean;
  /** Bytes of the stream to keep for the request log (0 keeps none). */
  captureBytes: number;
}

export interface SseRelayOptions extends SseReaderOptions {
  onFirstChunk: () => void;
  /**
   * The client's response: corked while the events of one turn of the event loop are written,
   * so they (and the end of the response when the provider's stream ends in that turn) leave in
   * one write instead of one per event.
   */
  response: { cork(): void; uncork(): void; readonly writableEnded: boolean } | null;
}

export interface SseRelayResult {
  usage: TokenUsage | null;
  captured: string;
  /** The model the provider named in its first chunks (what actually served the request). */
  model: string | null;
}

export interface SseReader {
  result: SseRelayResult;
  /** What to forward of this chunk: the chunk itself, rebuilt events, or null for nothing. */
  read(chunk: Buffer): Buffer | string | null;
  /** What to forward of an event left unterminated when the stream ends. */
  end(): string | null;
  /** Forgets a half-received event (a failed stream is not sent a broken one). */
  dropPartial(): void;
}

const EVENT_END = /\r?\n\r?\n/;
const endsWithEvent = (chunk: Buffer) =>
  chunk.length >= 2 &&
  chunk[chunk.length - 1] === 0x0a &&
  (chunk[chunk.length - 2] === 0x0a ||
    (chunk.length >= 4 && chunk[chunk.length - 3] === 0x0a && chunk[chunk.length - 2] === 0x0d));

// Buffer needles: a string needle is re-encoded on every search.
const USAGE_KEY = Buffer.from('"usage"');
const MODEL_KEY = Buffer.from('"model"');
const isSpace = (byte: number | undefined) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;

/** Whether some `"usage"` in the chunk is followed by an object (`"usage": null` on every chunk is not). */
function mayCarryUsage(chunk: Buffer): boolean {
  for (let at = chunk.indexOf(USAGE_KEY); at >= 0; at = chunk.indexOf(USAGE_KEY, at + USAGE_KEY.length)) {
    let i = at + USAGE_KEY.length;
    while (isSpace(chunk[i])) i++;
    if (chunk[i++] !== 0x3a) continue; // ':'
    while (isSpace(chunk[i])) i++;
    if (chunk[i] === 0x7b) return true; // '{'
  }
  return false;
}

/** Only events whose usage is an object are parsed. */
const HAS_USAGE = /"usage"\s*:\s*\{/;
const MODEL_AT = /^"model"\s*:\s*"([^"\\]{1,256})"/;
/** Enough bytes after `"model"` for the longest name MODEL_AT accepts (256 characters of up to 4 bytes). */
const MODEL_WINDOW = 1100;
/** Chunks searched for the model: it is in the first one when the provider names it at all. */
const MODEL_CHUNKS = 3;

function modelIn(chunk: Buffer): string | null {
  for (let at = chunk.indexOf(MODEL_KEY); at >= 0; at = chunk.indexOf(MODEL_KEY, at + MODEL_KEY.length)) {
    const name = MODEL_AT.exec(chunk.toString('utf8', at, at + MODEL_WINDOW))?.[1];
    if (name !== undefined) return name;
  }
  return null;
}

/**
 * Reads a server-sent-event stream chunk by chunk: the usage from the events that carry it, the
 * served model, a capture for the log. Chunks of whole events without a usage object are
 * forwarded as the provider's own bytes, undecoded; the others event by event.
 */
export function createSseReader(options: SseReaderOptions): SseReader {
  const result: SseRelayResult = { usage: null, captured: '', model: null };
  let partial = '';
  // Bytes after the chunk's last line break wait undecoded: a character cut at the chunk's edge
  // is decoded whole with the next chunk (a line feed is never inside a UTF-8 character).
  let undecoded: Buffer | null = null;
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
    if (data !== '[DONE]' && HAS_USAGE.test(data)) {
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

  return {
    result,
    read(chunk) {
      if (result.model === null && modelChunks++ < MODEL_CHUNKS) result.model = modelIn(chunk);
      // Fast path: whole events without usage pass through as the provider's own bytes.
      if (partial === '' && undecoded === null && endsWithEvent(chunk) && !mayCarryUsage(chunk)) {
        if (result.captured.length < options.captureBytes) keep(chunk.toString('utf8'));
        return chunk;
      }
      const bytes = undecoded === null ? chunk : Buffer.concat([undecoded, chunk]);
      const cut = bytes.lastIndexOf(0x0a) + 1;
      undecoded = cut < bytes.length ? bytes.subarray(cut) : null;
      if (cut === 0) return null;
      const text = partial + bytes.toString('utf8', 0, cut);
      const events = text.split(EVENT_END);
      partial = events.pop() ?? '';
      let out = '';
      for (const event of events) {
        const kept = event.length > 0 ? inspect(event) : '';
        if (kept !== '') out += `${kept}\n\n`;
      }
      if (out.length === 0) return null;
      keep(out);
      return out;
    },
    end() {
      const rest = partial + (undecoded?.toString('utf8') ?? '');
      partial = '';
      undecoded = null;
      if (rest.trim().length === 0) return null;
      const kept = inspect(rest);
      return kept === '' ? null : `${kept}\n\n`;
    },
    dropPartial() {
      partial = '';
      undecoded = null;
    },
  };
}

/**
 * Relays a provider's server-sent-event stream to the client as it arrives, reading it on the way
 * (createSseReader). What arrives in one turn of the event loop is sent as one chunk; nothing is
 * held back but a partial event at a chunk boundary. The provider's stream is paused while the
 * client does not keep up.
 */
export function relaySse(
  upstream: Readable,
  options: SseRelayOptions,
): {
  stream: Readable;
  result: SseRelayResult;
  fail(error: { message: string; type: string; code: string }): void;
} {
  const reader = createSseReader(options);
  const { response } = options;
  let pending: Buffer[] = [];
  let first = true;
  let done = false;
  let flushing = false;

  const out = new Readable({
    read: () => {
      upstream.resume();
    },
    destroy: (error, callback) => {
      done = true;
      pending = [];
      upstream.off('data', onData);
      upstream.off('end', onEnd);
      callback(error);
    },
  });

  const sendPending = () => {
    if (pending.length === 0) return;
    const data = pending.length === 1 ? pending[0]! : Buffer.concat(pending);
    pending = [];
    if (!out.push(data)) upstream.pause();
  };

  const flush = () => {
    flushing = false;
    if (!done) sendPending();
    // end() of a response flushes (and uncorks) by itself.
    if (response && !response.writableEnded) response.uncork();
  };

  const onData = (chunk: Buffer) => {
    if (first) {
      first = false;
      options.onFirstChunk();
    }
    const forward = reader.read(chunk);
    if (forward === null || done) return;
    pending.push(typeof forward === 'string' ? Buffer.from(forward) : forward);
    if (!flushing) {
      flushing = true;
      response?.cork();
      setImmediate(flush);
    }
  };

  const finish = (last: string | null) => {
    done = true;
    sendPending();
    if (last !== null) out.push(last);
    out.push(null);
  };

  const onEnd = () => {
    if (!done) finish(reader.end());
  };

  upstream.on('data', onData);
  upstream.once('end', onEnd);

  return {
    stream: out,
    result: reader.result,
    /** Ends the client's stream with an error event (never a clean `[DONE]`) after an upstream failure. */
    fail(error) {
      if (done || out.destroyed) return;
      reader.dropPartial(); // a half-received event is dropped rather than sent broken
      finish(`data: ${JSON.stringify({ error: { ...error, param: null } })}\n\n`);
    },
  };
}
