import { Readable, Transform, type TransformCallback } from 'node:stream';

const LF = 0x0a;
const CR = 0x0d;

/**
 * Cuts SSE bytes into events, each with its terminating blank line, so that a cached stream is
 * sent back as the events it was made of. Lines may end in LF, CRLF or CR (the SSE grammar);
 * bytes after the last blank line form a last, unterminated piece.
 */
export function splitSseEvents(body: Buffer): Buffer[] {
  const events: Buffer[] = [];
  let start = 0;
  let lineStart = 0;
  let i = 0;
  while (i < body.length) {
    const byte = body[i]!;
    if (byte !== LF && byte !== CR) {
      i++;
      continue;
    }
    const end = byte === CR && body[i + 1] === LF ? i + 2 : i + 1;
    if (i === lineStart && i > start) {
      // An empty line: the event ends here.
      events.push(body.subarray(start, end));
      start = end;
    }
    lineStart = end;
    i = end;
  }
  if (start < body.length) events.push(body.subarray(start));
  return events;
}

/** A cached SSE body as a stream that emits it event by event. */
export function replaySse(body: Buffer): Readable {
  return Readable.from(splitSseEvents(body), { objectMode: false });
}

/**
 * A pass-through to put between the answer and the client: it forwards every chunk unchanged
 * and, once the stream has ended normally, hands the whole body to `onComplete` (null when it
 * grew past `maxBytes`). A stream destroyed midway (client gone, upstream failure) never calls
 * it, so a truncated answer is never cached.
 */
export function createCacheCapture(options: {
  maxBytes: number;
  onComplete: (body: Buffer | null) => void;
}): Transform {
  let chunks: Buffer[] | null = [];
  let size = 0;
  return new Transform({
    transform(chunk: Buffer | string, _encoding: BufferEncoding, callback: TransformCallback) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      if (chunks !== null) {
        size += bytes.length;
        if (size > options.maxBytes) chunks = null;
        else chunks.push(bytes);
      }
      callback(null, bytes);
    },
    flush(callback: TransformCallback) {
      try {
        options.onComplete(chunks === null ? null : Buffer.concat(chunks, size));
      } finally {
        callback();
      }
    },
  });
}
