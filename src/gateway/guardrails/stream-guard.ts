import { Transform, type Readable, type TransformCallback } from 'node:stream';

const EVENT_END = /\r?\n\r?\n/;

/** The `data:` payload of one server-sent event ('' when it has none). */
export function eventData(event: string): string {
  let data = '';
  for (const line of event.split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const value = line.slice(line.charAt(5) === ' ' ? 6 : 5);
    data = data === '' ? value : `${data}\n${value}`;
  }
  return data;
}

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
  verdict: (text: string) => Promise<string | null>,
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
  return new Transform({
    transform(chunk: Buffer | string, _encoding, callback: TransformCallback) {
      take(this, typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
      callback();
    },
    flush(callback: TransformCallback) {
      if (partial.trim().length > 0) take(this, '\n\n');
      verdict(text).then(
        (event) => {
          if (event) this.push(event);
          if (done) this.push(done);
          callback();
        },
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
      );
    },
  });
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
