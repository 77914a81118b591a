import { usageFromBody, type TokenUsage } from '../providers/usage.js';

/**
 * The most bytes of one event held while waiting for its end. A provider's event of hundreds of
 * megabytes was held whole, and past 512 MB its text could not be made at all: the process died
 * (`ERR_STRING_TOO_LONG`). An event past this is dropped and the stream failed.
 */
export const MAX_SSE_EVENT_BYTES = 16 * 1024 * 1024;

export interface SseReaderOptions {
  /** Drop the usage-only chunk (`choices: []`) that the gateway asked for on the client's behalf. */
  dropUsageOnlyChunk: boolean;
  /** Bytes of the stream to keep for the request log (0 keeps none). */
  captureBytes: number;
}

export interface SseRelayResult {
  usage: TokenUsage | null;
  captured: string;
  /** The model the provider named in its first chunks (what actually served the request). */
  model: string | null;
}

export interface SseReader {
  result: SseRelayResult;
  /**
   * What to forward of this chunk: its whole events as the provider's own bytes (the chunk itself
   * when it is whole events), less a usage-only event to drop; null for nothing.
   */
  read(chunk: Buffer): Buffer | null;
  /** What to forward of an event left unterminated when the stream ends. */
  end(): string | null;
  /** Forgets a half-received event (a failed stream is not sent a broken one). */
  dropPartial(): void;
  /** An event went past MAX_SSE_EVENT_BYTES: it was dropped, and reading went on after its end. */
  readonly overflowed: boolean;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Whether `bytes[at]` is the line feed that ends an event: the second line break of a blank line
 * (`\n\n`, `\r\n\n`, `\n\r\n` or `\r\n\r\n`). `before` holds the bytes that came before
 * `bytes` (the tail of a held partial event), read when `at` is at the very start.
 */
function endsEventAt(bytes: Buffer, at: number, before: Buffer | null): boolean {
  if (bytes[at] !== LF) return false;
  const byte = (i: number) => (i >= 0 ? bytes[i] : before !== null ? before[before.length + i] : undefined);
  const previous = byte(at - 1);
  return previous === LF || (previous === CR && byte(at - 2) === LF);
}

/** The index just past the last event terminator in `bytes`, or -1 when there is none. */
function lastEventEnd(bytes: Buffer, before: Buffer | null): number {
  for (let at = bytes.lastIndexOf(LF); at >= 0; at = at > 0 ? bytes.lastIndexOf(LF, at - 1) : -1)
    if (endsEventAt(bytes, at, before)) return at + 1;
  return -1;
}

/** The index just past the first event terminator in `bytes`, or -1 when there is none. */
function firstEventEnd(bytes: Buffer, before: Buffer | null): number {
  for (let at = bytes.indexOf(LF); at >= 0; at = bytes.indexOf(LF, at + 1))
    if (endsEventAt(bytes, at, before)) return at + 1;
  return -1;
}

/** The last two bytes of what came before and `chunk`, for a terminator cut between chunks. */
const tailOf = (before: Buffer | null, chunk: Buffer): Buffer =>
  chunk.length >= 2 || before === null ? chunk : Buffer.concat([before, chunk]).subarray(-2);

/** The event around `at` in `events` (whole events): where it starts, where its text ends, where its terminator ends. */
function eventAround(events: Buffer, at: number): { start: number; textEnd: number; end: number } {
  let start = 0;
  for (let i = events.lastIndexOf(LF, at); i > 0; i = events.lastIndexOf(LF, i - 1))
    if (endsEventAt(events, i, null)) {
      start = i + 1;
      break;
    }
  let end = events.length;
  for (let i = events.indexOf(LF, at); i >= 0; i = events.indexOf(LF, i + 1))
    if (endsEventAt(events, i, null)) {
      end = i + 1;
      break;
    }
  // The terminator is two line breaks, each `\n` or `\r\n`.
  let textEnd = end - 1; // the last line feed
  if (events[textEnd - 1] === CR) textEnd--;
  textEnd--; // the first line break's line feed
  if (textEnd > start && events[textEnd - 1] === CR) textEnd--;
  return { start, textEnd: Math.max(start, textEnd), end };
}

// Buffer needles: a string needle is re-encoded on every search.
const USAGE_KEY = Buffer.from('"usage"');
const MODEL_KEY = Buffer.from('"model"');
const isSpace = (byte: number | undefined) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;

/** Where the next `"usage"` followed by an object starts, from `from` on (`"usage": null` on every chunk is not one); -1 if none. */
function nextUsageObject(chunk: Buffer, from: number): number {
  for (let at = chunk.indexOf(USAGE_KEY, from); at >= 0; at = chunk.indexOf(USAGE_KEY, at + USAGE_KEY.length)) {
    let i = at + USAGE_KEY.length;
    while (isSpace(chunk[i])) i++;
    if (chunk[i++] !== 0x3a) continue; // ':'
    while (isSpace(chunk[i])) i++;
    if (chunk[i] === 0x7b) return at; // '{'
  }
  return -1;
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

/** The `data:` payload of one event's text, its lines joined as SSE defines ('' when it has none; a single `data:` line is read without splitting). */
export function eventData(event: string): string {
  if (event.startsWith('data:') && event.indexOf('\n') < 0) return event.slice(event.charAt(5) === ' ' ? 6 : 5);
  return event
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(line.charAt(5) === ' ' ? 6 : 5))
    .join('\n');
}

/**
 * Reads a server-sent-event stream chunk by chunk: the usage from the events that carry it, the
 * served model, a capture for the log. Whole events are forwarded as the provider's own bytes,
 * undecoded (the chunk itself when it ends on an event's end); only an event with a usage object
 * is decoded and parsed, and dropped when it is the usage-only chunk the client did not ask for.
 * A partial event at a chunk's end waits, as bytes, for the rest (a character cut at the chunk's
 * edge is decoded whole).
 */
export function createSseReader(options: SseReaderOptions): SseReader {
  return new SseEventReader(options.dropUsageOnlyChunk, options.captureBytes);
}

/** A class rather than closures: one object per stream. */
class SseEventReader implements SseReader {
  readonly result: SseRelayResult = { usage: null, captured: '', model: null };
  /** The bytes of a partial event, held until its end arrives. */
  private held: Buffer[] = [];
  /** The last held bytes (at least the last 2 when there are), for a terminator cut between chunks. */
  private heldTail: Buffer | null = null;
  private heldBytes = 0;
  /** Past an event that went over the bound: its bytes are skipped up to its end. */
  private skipping = false;
  overflowed = false;
  private modelChunks = 0;

  constructor(
    private readonly dropUsageOnlyChunk: boolean,
    private readonly captureBytes: number,
  ) {}

  read(chunk: Buffer): Buffer | null {
    const { result } = this;
    if (result.model === null && this.modelChunks++ < MODEL_CHUNKS) result.model = modelIn(chunk);
    if (this.skipping) {
      const resume = firstEventEnd(chunk, this.heldTail);
      if (resume < 0) {
        this.heldTail = tailOf(this.heldTail, chunk);
        return null;
      }
      this.skipping = false;
      this.heldTail = null;
      if (resume === chunk.length) return null;
      chunk = chunk.subarray(resume);
    }
    const cut = lastEventEnd(chunk, this.heldTail);
    if (cut < 0) {
      this.hold(chunk);
      return null;
    }
    let events = cut === chunk.length ? chunk : chunk.subarray(0, cut);
    if (this.held.length > 0) {
      this.held.push(events);
      events = Buffer.concat(this.held);
      this.held = [];
      this.heldBytes = 0;
    }
    this.heldTail = null;
    if (cut < chunk.length) this.hold(chunk.subarray(cut));
    return this.readEvents(events);
  }

  /** Holds the start of an event until its end comes, or drops it past the bound. */
  private hold(bytes: Buffer): void {
    this.heldTail = tailOf(this.heldTail, bytes);
    this.heldBytes += bytes.length;
    if (this.heldBytes <= MAX_SSE_EVENT_BYTES) {
      this.held.push(bytes);
      return;
    }
    this.held = [];
    this.heldBytes = 0;
    this.skipping = true;
    this.overflowed = true;
  }

  end(): string | null {
    const rest = this.held.length === 0 ? '' : Buffer.concat(this.held).toString('utf8');
    this.dropPartial();
    if (rest.trim().length === 0) return null;
    const kept = this.inspect(rest);
    return kept === '' ? null : `${kept}\n\n`;
  }

  dropPartial(): void {
    this.held = [];
    this.heldBytes = 0;
    this.heldTail = null;
  }

  /** Whole events: the usage of those that carry an object read, a usage-only one dropped when asked. */
  private readEvents(events: Buffer): Buffer | null {
    const out = withoutEvents(
      events,
      (from) => nextUsageObject(events, from),
      (start, textEnd) => this.inspect(events.toString('utf8', start, textEnd)) === '',
    );
    if (out !== null && this.result.captured.length < this.captureBytes) this.keep(out.toString('utf8'));
    return out;
  }

  /** Returns the event's text to forward, or '' to drop it. */
  private inspect(event: string): string {
    const data = eventData(event);
    if (data !== '[DONE]' && HAS_USAGE.test(data)) {
      try {
        const parsed = JSON.parse(data) as { choices?: unknown[] };
        this.result.usage = usageFromBody(parsed) ?? this.result.usage;
        if (this.dropUsageOnlyChunk && Array.isArray(parsed.choices) && parsed.choices.length === 0) return '';
      } catch {
        // not JSON: forward as it came
      }
    }
    return event;
  }

  private keep(text: string): void {
    const { result } = this;
    if (result.captured.length < this.captureBytes)
      result.captured += text.slice(0, this.captureBytes - result.captured.length);
  }
}

/**
 * `events` (whole events) less those that `drop` (given where each starts, where its text ends
 * and where its terminator ends) removes, each found from an offset by `next`: the same Buffer
 * when none is removed, null when none is left.
 */
export function withoutEvents(
  events: Buffer,
  next: (from: number) => number,
  drop: (start: number, textEnd: number, end: number) => boolean,
): Buffer | null {
  let kept: Buffer[] | null = null; // pieces of `events` left once an event is dropped
  let from = 0; // where the piece not yet kept starts
  for (let at = next(0); at >= 0;) {
    const { start, textEnd, end } = eventAround(events, at);
    if (drop(start, textEnd, end)) {
      kept ??= [];
      if (start > from) kept.push(events.subarray(from, start));
      from = end;
    }
    at = next(Math.max(end, at + 1));
  }
  if (kept === null) return events;
  if (from < events.length) kept.push(events.subarray(from));
  return kept.length === 0 ? null : kept.length === 1 ? kept[0]! : Buffer.concat(kept);
}
