import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { eventData } from '../sse-reader.js';

const EVENT_END = /\r?\n\r?\n/;

/**
 * The text an OpenAI-format stream event adds to the answer: chat deltas, completion text, and
 * the Responses API's `response.output_text.delta`.
 */
export function eventText(data: string): string {
  if (data === '' || data === '[DONE]' || !data.startsWith('{')) return '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return '';
  }
  if (typeof parsed !== 'object' || parsed === null) return '';
  const event = parsed as { type?: unknown; delta?: unknown; choices?: unknown };
  if (event.type === 'response.output_text.delta' && typeof event.delta === 'string') return event.delta;
  if (!Array.isArray(event.choices)) return '';
  let text = '';
  for (const choice of event.choices as Array<{ delta?: { content?: unknown }; text?: unknown }>) {
    if (typeof choice?.delta?.content === 'string') text += choice.delta.content;
    else if (typeof choice?.text === 'string') text += choice.text;
  }
  return text;
}

/**
 * A stream that flows to the client as it comes, while the answer's text is collected; at its
 * end (before `data: [DONE]`), `verdict(text)` runs and the event it returns is sent, then the
 * `[DONE]` the provider sent. The established gateway sends its verdict after the stream and
 * takes no action; here it arrives while the client still reads. With `collectText: false` (no
 * guardrail judges the text) events are only split and passed on: `verdict` gets ''.
 */
export function createVerdictStream(
  verdict: (text: string) => string | null | Promise<string | null>,
  options: { collectText?: boolean } = {},
): Transform {
  const collect = options.collectText ?? true;
  let partial = '';
  let text = '';
  let done: string | null = null;
  const take = (stream: Transform, chunk: string) => {
    const events = (partial + chunk).split(EVENT_END);
    partial = events.pop() ?? '';
    let out = '';
    for (const event of events) {
      if (event.length === 0) continue;
      // Only an event that mentions [DONE] can be the end marker: the others are read for their text, if wanted.
      const data = collect || event.includes('[DONE]') ? eventData(event) : '';
      if (data === '[DONE]') {
        done = `${event}\n\n`;
        continue;
      }
      if (collect) text += eventText(data);
      out += `${event}\n\n`;
    }
    if (out.length > 0) stream.push(out);
  };
  const end = (stream: Transform, event: string | null, callback: TransformCallback) => {
    if (event) stream.push(event);
    if (done) stream.push(done);
    callback();
  };
  return new Transform({
    transform(chunk: Buffer | string, _encoding, callback: TransformCallback) {
      // Nothing to read in a chunk of whole events without the end marker: it passes as the bytes it is.
      if (!collect && partial === '' && Buffer.isBuffer(chunk) && passesAsIs(chunk)) this.push(chunk);
      else take(this, typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
      callback();
    },
    flush(callback: TransformCallback) {
      if (partial.trim().length > 0) take(this, '\n\n');
      let event: string | null | Promise<string | null>;
      try {
        event = verdict(text);
      } catch (error) {
        callback(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      if (!(event instanceof Promise)) return end(this, event, callback);
      event.then(
        (judged) => end(this, judged, callback),
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
      );
    },
  });
}

const DONE = Buffer.from('[DONE]');
const THREE_LINE_FEEDS = Buffer.from('\n\n\n');
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * Whether splitting `chunk` into events and joining them again (what `take` does) gives the
 * chunk back: whole events separated by one blank line each (`\n\n`, no `\r`, no empty event),
 * none of them the end marker.
 */
function passesAsIs(chunk: Buffer): boolean {
  const length = chunk.length;
  return (
    length >= 2 &&
    chunk[0] !== LINE_FEED &&
    chunk[length - 1] === LINE_FEED &&
    chunk[length - 2] === LINE_FEED &&
    !chunk.includes(CARRIAGE_RETURN) &&
    !chunk.includes(THREE_LINE_FEEDS) &&
    !chunk.includes(DONE)
  );
}

export interface HeldStream {
  /** Every event as received, to send when the verdict lets the answer through. */
  events: string;
  /** The answer's text. */
  text: string;
  /** Whether the stream went past `maxBytes` (then `events` is incomplete and must not be sent). */
  overflowed: boolean;
}

/**
 * Reads a whole stream before anything is sent, for output guardrails that may deny: the client
 * gets its first byte only after the check. Bounded by `maxBytes`.
 */
export async function holdStream(body: Readable, maxBytes: number): Promise<HeldStream> {
  const chunks: string[] = [];
  let size = 0;
  let overflowed = false;
  for await (const chunk of body as AsyncIterable<Buffer | string>) {
    const piece = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    size += piece.length;
    if (size > maxBytes) {
      overflowed = true;
      break;
    }
    chunks.push(piece);
  }
  const events = chunks.join('');
  let text = '';
  for (const event of events.split(EVENT_END)) text += eventText(eventData(event));
  return { events, text, overflowed };
}
