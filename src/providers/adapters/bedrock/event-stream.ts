import type { EventStreamCodec, Message } from '@smithy/core/event-streams';

let codec: EventStreamCodec | null = null;

/**
 * Loads the event-stream codec: called before the first ConverseStream request is sent, so
 * that a gateway that never streams from Bedrock does not carry it in memory.
 */
export async function loadEventStreamCodec(): Promise<void> {
  if (codec) return;
  const { EventStreamCodec: Codec } = await import('@smithy/core/event-streams');
  codec = new Codec(
    (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
    (text) => new Uint8Array(Buffer.from(text, 'utf8')),
  );
}

/** Each frame starts with its total length (4 bytes, big-endian); frames are at least 16 bytes. */
const PRELUDE_BYTES = 4;
const MIN_FRAME = 16;
/** Far above any Bedrock event; a length beyond it means the stream is not event-stream framing. */
const MAX_FRAME = 16 * 1024 * 1024;

function loadedCodec(): EventStreamCodec {
  if (!codec) throw new Error('the event-stream codec is not loaded (loadEventStreamCodec)');
  return codec;
}

/** One decoded `application/vnd.amazon.eventstream` message: string headers and its JSON payload. */
export interface StreamMessage {
  headers: Record<string, string>;
  payload: unknown;
}

/**
 * Cuts a byte stream into event-stream messages as chunks arrive (a frame may span chunks, a
 * chunk may hold several). The codec checks both CRCs and decodes the headers; a frame that
 * fails is thrown, since nothing after it can be trusted. The chunks of an incomplete frame are
 * kept as they came and copied into one buffer once, when its last byte has arrived, so a large
 * frame cut into many chunks costs time linear in its size.
 */
export class EventStreamReader {
  private chunks: Buffer[] = [];
  /** Bytes held in `chunks`. */
  private held = 0;

  push(chunk: Buffer): StreamMessage[] {
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.held += chunk.length;
    }
    const messages: StreamMessage[] = [];
    while (this.held >= PRELUDE_BYTES) {
      const total = this.frameLength();
      if (total < MIN_FRAME || total > MAX_FRAME) throw new Error(`invalid event-stream frame length ${total}`);
      if (this.held < total) break;
      messages.push(toStreamMessage(loadedCodec().decode(this.frame(total))));
      this.drop(total);
    }
    return messages;
  }

  /** Bytes of an incomplete frame left when the stream ended. */
  get leftover(): number {
    return this.held;
  }

  /** The first frame's length: its first 4 bytes, big-endian, which may span chunks. */
  private frameLength(): number {
    const first = this.chunks[0]!;
    if (first.length >= PRELUDE_BYTES) return first.readUInt32BE(0);
    let total = 0;
    let read = 0;
    for (const chunk of this.chunks) {
      for (let i = 0; i < chunk.length && read < PRELUDE_BYTES; i++, read++) total = total * 256 + chunk[i]!;
      if (read === PRELUDE_BYTES) break;
    }
    return total;
  }

  /** The first `total` bytes, copied only when they span chunks. */
  private frame(total: number): Buffer {
    const first = this.chunks[0]!;
    if (first.length >= total) return first.subarray(0, total);
    const parts: Buffer[] = [];
    let left = total;
    for (const chunk of this.chunks) {
      if (left === 0) break;
      parts.push(chunk.length <= left ? chunk : chunk.subarray(0, left));
      left -= Math.min(chunk.length, left);
    }
    return Buffer.concat(parts, total);
  }

  private drop(total: number): void {
    let whole = 0;
    let left = total;
    while (whole < this.chunks.length && this.chunks[whole]!.length <= left) left -= this.chunks[whole++]!.length;
    this.chunks.splice(0, whole);
    if (left > 0) this.chunks[0] = this.chunks[0]!.subarray(left);
    this.held -= total;
  }
}

function toStreamMessage(message: Message): StreamMessage {
  const headers: Record<string, string> = {};
  for (const [name, header] of Object.entries(message.headers)) {
    if (header.type === 'string') headers[name] = header.value;
  }
  const text = Buffer.from(message.body.buffer, message.body.byteOffset, message.body.byteLength).toString('utf8');
  return { headers, payload: parsePayload(text) };
}

/** An event's payload: its JSON, or the text itself when it is not JSON. */
function parsePayload(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
