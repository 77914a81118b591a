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
 * fails is thrown, since nothing after it can be trusted.
 */
export class EventStreamReader {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): StreamMessage[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const messages: StreamMessage[] = [];
    while (this.pending.length >= PRELUDE_BYTES) {
      const total = this.pending.readUInt32BE(0);
      if (total < MIN_FRAME || total > MAX_FRAME) throw new Error(`invalid event-stream frame length ${total}`);
      if (this.pending.length < total) break;
      messages.push(toStreamMessage(loadedCodec().decode(this.pending.subarray(0, total))));
      this.pending = this.pending.subarray(total);
    }
    return messages;
  }

  /** Bytes of an incomplete frame left when the stream ended. */
  get leftover(): number {
    return this.pending.length;
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
