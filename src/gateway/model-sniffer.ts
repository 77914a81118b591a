import { Readable, Transform, type TransformCallback } from 'node:stream';

/**
 * Reads the `model` of a request body that streams through to the provider (multipart uploads,
 * pass-through JSON) for the log, without holding the body: each chunk is searched in place for
 * the field's marker, and only the few hundred bytes after it are kept until the value is read.
 */
export type BodyKind = 'multipart' | 'json';

const MARKER: Record<BodyKind, Buffer> = { multipart: Buffer.from('name="model"'), json: Buffer.from('"model"') };
/** What follows the marker: the part's remaining headers, a blank line, the value; or `: "value"`. */
const VALUE: Record<BodyKind, RegExp> = {
  multipart: /^(?:;[^\r\n]*)?\r\n(?:[^\r\n]+\r\n)*\r\n([^\r\n]{1,256})\r\n/,
  json: /^\s*:\s*"((?:[^"\\]|\\.){1,256})"/,
};
const TAIL_BYTES = 512;

export function bodyKindOf(contentType: string | undefined): BodyKind | null {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'multipart/form-data') return 'multipart';
  if (type === 'application/json') return 'json';
  return null;
}

export function sniffModel(kind: BodyKind, onModel: (model: string) => void): Transform {
  const marker = MARKER[kind];
  const valueRe = VALUE[kind];
  let carry = Buffer.alloc(0); // the last bytes of the previous chunk, for a marker split across chunks
  let tail: Buffer | null = null; // bytes after a marker, until the value can be read
  let done = false;

  const readValue = (): void => {
    const match = valueRe.exec(tail!.toString('latin1'));
    if (match) {
      done = true;
      const raw = Buffer.from(match[1]!, 'latin1').toString('utf8');
      onModel(kind === 'json' ? unescapeJson(raw) : raw.trim());
    } else if (tail!.length >= TAIL_BYTES) {
      tail = null; // not the field after all (`"model": {…}`, a file's bytes): keep looking
    }
  };

  const scan = (chunk: Buffer): void => {
    let from = 0;
    while (!done && from < chunk.length) {
      if (tail !== null) {
        const take = chunk.subarray(from, from + TAIL_BYTES - tail.length);
        tail = Buffer.concat([tail, take]);
        from += take.length;
        readValue();
        continue;
      }
      // A marker that starts in the carried bytes and ends in this chunk.
      if (from === 0 && carry.length > 0) {
        const joined = Buffer.concat([carry, chunk.subarray(0, marker.length - 1)]);
        const at = joined.indexOf(marker);
        if (at >= 0) {
          from = at + marker.length - carry.length;
          tail = Buffer.alloc(0);
          continue;
        }
      }
      const at = chunk.indexOf(marker, from);
      if (at < 0) break;
      from = at + marker.length;
      tail = Buffer.alloc(0);
    }
    // A copy, so that the carried bytes do not keep the whole chunk alive.
    carry = Buffer.from(Buffer.concat([carry, chunk.subarray(-(marker.length - 1))]).subarray(-(marker.length - 1)));
  };

  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      if (!done) scan(chunk);
      callback(null, chunk);
    },
  });
}

function unescapeJson(text: string): string {
  try {
    return JSON.parse(`"${text}"`) as string;
  } catch {
    return text;
  }
}

/** The raw request body, watched for its `model` when it is multipart or JSON; others pass as they are. */
export function withModelSniffer(body: unknown, contentType: string | undefined, onModel: (model: string) => void): unknown {
  const kind = bodyKindOf(contentType);
  if (kind === null || !(body instanceof Readable)) return body;
  const sniffer = sniffModel(kind, onModel);
  body.once('error', (error) => sniffer.destroy(error));
  return body.pipe(sniffer);
}
