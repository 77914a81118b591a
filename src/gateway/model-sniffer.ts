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
/** Text after the marker that may still become a value once more bytes arrive. */
const MAY_FOLLOW: Record<BodyKind, RegExp> = {
  multipart: /^(?:$|;|\r)/,
  json: /^\s*(?::\s*(?:"(?:[^"\\]|\\.)*\\?)?)?$/,
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
  const overlap = marker.length - 1;
  let carry = Buffer.alloc(0); // the last bytes seen, for a marker split across chunks
  let tail: Buffer | null = null; // bytes after a marker, until the value can be read
  let done = false;

  /** Reads the value after the marker if it is all there; false once it cannot be the field. */
  const judge = (): boolean => {
    const text = tail!.toString('latin1');
    const match = VALUE[kind].exec(text);
    if (match) {
      done = true;
      const raw = Buffer.from(match[1]!, 'latin1').toString('utf8');
      onModel(kind === 'json' ? unescapeJson(raw) : raw.trim());
      return true;
    }
    return tail!.length < TAIL_BYTES && MAY_FOLLOW[kind].test(text);
  };

  const scan = (chunk: Buffer): void => {
    let from = 0;
    let joinChecked = false;
    while (!done && from < chunk.length) {
      if (tail !== null) {
        const take = chunk.subarray(from, from + TAIL_BYTES - tail.length);
        tail = Buffer.concat([tail, take]);
        from += take.length;
        if (!judge()) {
          // Not the field (`"model": {…}`, a file's bytes): look again in what followed the marker.
          const rest = tail;
          tail = null;
          carry = Buffer.alloc(0);
          scan(rest);
          joinChecked = false;
        }
        continue;
      }
      if (!joinChecked && carry.length > 0) {
        // A marker that starts in the carried bytes and ends here.
        joinChecked = true;
        const joined = Buffer.concat([carry, chunk.subarray(from, from + overlap)]);
        const at = joined.indexOf(marker);
        if (at >= 0) {
          from += at + marker.length - carry.length;
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
    if (tail === null) carry = Buffer.from(Buffer.concat([carry, chunk.subarray(-overlap)]).subarray(-overlap));
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
export function withModelSniffer(
  body: unknown,
  contentType: string | undefined,
  onModel: (model: string) => void,
): unknown {
  const kind = bodyKindOf(contentType);
  if (kind === null || !(body instanceof Readable)) return body;
  const sniffer = sniffModel(kind, onModel);
  body.once('error', (error) => sniffer.destroy(error));
  return body.pipe(sniffer);
}
