import { Readable } from 'node:stream';
import { AppError } from '../lib/errors.js';
import {
  createSseReader,
  eventData,
  MAX_SSE_EVENT_BYTES,
  withoutEvents,
  type SseReaderOptions,
  type SseRelayResult,
} from './sse-reader.js';
import { watchSilence } from './stream-silence.js';

export interface SseRelayOptions extends SseReaderOptions {
  onFirstChunk: () => void;
  /**
   * How long a stream may go without a chunk that carries data (`upstream_body_timeout_ms`):
   * comments keep a connection alive, not a stream. Not counted while the client holds it paused.
   */
  eventTimeoutMs: number;
  /**
   * The client's response: corked while the events of one turn of the event loop are written,
   * so they (and the end of the response when the provider's stream ends in that turn) leave in
   * one write instead of one per event.
   */
  response: { cork(): void; uncork(): void; readonly writableEnded: boolean } | null;
}

export interface SseRelay {
  /** The client's stream (`holdDoneForVerdict` takes it). */
  readonly stream: Readable;
  readonly result: SseRelayResult;
  /** Ends the client's stream with an error event (never a clean `[DONE]`) after an upstream failure. */
  fail(error: { message: string; type: string; code: string }): void;
}

const DONE = Buffer.from('[DONE]');
/** A chunk with a data field carries an event; one of comments only (`: keep-alive`) does not. */
const DATA_FIELD = Buffer.from('data:');
/** Where a relay's client stream keeps the step that takes a verdict event (holdDoneForVerdict). */
const VERDICT_SLOT = Symbol('svcgw.sseVerdict');
type VerdictSlot = (verdict: () => string) => boolean;

/**
 * Asks the relay whose client stream is `stream` to send `verdict()`'s event at the end, before
 * the provider's `data: [DONE]` (held back until then), as `createVerdictStream` does without a
 * stream of its own in between. False when `stream` is not a relay's, or when the relay has
 * already read from the provider (a `[DONE]` may have gone): the caller then pipes instead.
 */
export function holdDoneForVerdict(stream: Readable, verdict: () => string): boolean {
  const slot = (stream as Readable & { [VERDICT_SLOT]?: VerdictSlot })[VERDICT_SLOT];
  return slot !== undefined && slot(verdict);
}

/** Whether an event's text (with or without its terminator) is the end marker. */
const isDoneEvent = (event: string) => eventData(event.trimEnd()) === '[DONE]';

/**
 * Relays a provider's server-sent-event stream to the client as it arrives, reading it on the way
 * (createSseReader). What arrives in one turn of the event loop is sent as one chunk; nothing is
 * held back but a partial event at a chunk boundary. The provider's stream is paused while the
 * client does not keep up.
 *
 * Closures over one plain Readable, not a Readable subclass: a subclass (same steps as methods)
 * was twice as fast in isolation, but in the gateway each stream then promoted ~11.7 KB into the
 * old generation and cost ~75 us more CPU (2026-11-24, --trace-gc-nvp, stream:32).
 */
export function relaySse(upstream: Readable, options: SseRelayOptions): SseRelay {
  const reader = createSseReader(options);
  const { response } = options;
  let pending: Buffer[] = [];
  let first = true;
  let done = false;
  let flushing = false;
  /** The verdict event to send before the end marker (guardrails), and the end marker held for it. */
  let verdict: (() => string) | null = null;
  let heldDone: Buffer | string | null = null;

  const silence = watchSilence(upstream, options.eventTimeoutMs);

  const out = new Readable({
    read: () => {
      upstream.resume();
    },
    destroy: (error, callback) => {
      done = true;
      silence.stop();
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
    if (chunk.includes(DATA_FIELD)) silence.event();
    let forward = reader.read(chunk);
    if (forward !== null && verdict !== null) {
      // Each `data: [DONE]` is held back until the verdict has gone (the last one is sent).
      const events = forward;
      forward = withoutEvents(
        events,
        (from) => events.indexOf(DONE, from),
        (start, textEnd, end) => {
          if (eventData(events.toString('utf8', start, textEnd)) !== '[DONE]') return false;
          heldDone = events.subarray(start, end);
          return true;
        },
      );
    }
    if (forward !== null && !done) {
      pending.push(forward);
      if (!flushing) {
        flushing = true;
        response?.cork();
        setImmediate(flush);
      }
    }
    if (reader.overflowed && !upstream.destroyed) {
      // The stream fails as on any provider error: its error handler ends the client's stream
      // with the error event, after the whole events that came before.
      upstream.destroy(
        new AppError('UPSTREAM_ERROR', `The provider sent an event larger than ${MAX_SSE_EVENT_BYTES} bytes.`),
      );
    }
  };

  const finish = (last: string | null) => {
    done = true;
    silence.stop();
    sendPending();
    if (last !== null && verdict !== null && isDoneEvent(last)) heldDone = last;
    else if (last !== null) out.push(last);
    if (verdict !== null) {
      let event: string;
      try {
        event = verdict();
      } catch (error) {
        out.destroy(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      out.push(event);
      if (heldDone !== null) out.push(heldDone);
    }
    out.push(null);
  };
  const slot: VerdictSlot = (judge) => {
    if (!first || verdict !== null) return false;
    verdict = judge;
    return true;
  };
  Object.defineProperty(out, VERDICT_SLOT, { value: slot });

  const onEnd = () => {
    if (!done) finish(reader.end());
  };

  upstream.on('data', onData);
  upstream.once('end', onEnd);

  return {
    stream: out,
    result: reader.result,
    fail(error) {
      if (done || out.destroyed) return;
      reader.dropPartial(); // a half-received event is dropped rather than sent broken
      finish(`data: ${JSON.stringify({ error: { ...error, param: null } })}\n\n`);
    },
  };
}
