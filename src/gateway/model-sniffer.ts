import { Readable, Transform, type TransformCallback } from 'node:stream';

/**
 * Reads the `model` of a request body that streams through to the provider (multipart uploads,
 * pass-through JSON) for the log, without holding the body: each chunk is searched for the field's
 * marker, and only the end of what was seen (a cut marker, or one whose value is still coming) is
 * kept for the next chunk. A marker that is not the field costs one bounded match, whatever the
 * body holds: a body of nothing but markers is read in time proportional to its length.
 */
export type BodyKind = 'multipart' | 'json';

const MARKER: Record<BodyKind, string> = { multipart: 'name="model"', json: '"model"' };
/**
 * What follows the marker: the part's remaining headers, a blank line, the value; or `: "value"`.
 * Every repeat is bounded, so that judging one marker reads at most the window after it.
 */
const JSON_VALUE = String.raw`\s*:\s*"((?:[^"\\]|\\.){1,256})"`;
const VALUE: Record<BodyKind, RegExp> = {
  multipart: /^\r\n(?:[^\r\n]{1,256}\r\n){0,4}\r\n([^\r\n]{1,256})\r\n/,
  json: new RegExp(`^${JSON_VALUE}`),
};
/** The field anywhere in JSON text (not after a marker found by hand). */
const JSON_MODEL = new RegExp(`${MARKER.json}${JSON_VALUE}`);
/** Text after the marker that may still become a value once more bytes arrive. */
const MAY_FOLLOW: Record<BodyKind, RegExp> = {
  multipart: /^(?:$|\r)/,
  json: /^\s*(?::\s*(?:"(?:[^"\\]|\\.)*\\?)?)?$/,
};
/** The bytes after a marker in which its value must be found. */
const WINDOW = 512;

export function bodyKindOf(contentType: string | undefined): BodyKind | null {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'multipart/form-data') return 'multipart';
  if (type === 'application/json') return 'json';
  return null;
}

export function sniffModel(kind: BodyKind, onModel: (model: string) => void): Transform {
  const marker = MARKER[kind];
  // Bytes read as latin1, one character per byte, so that offsets are byte offsets.
  let pending = ''; // the end of the bytes seen: a marker cut by the chunk, or one whose value is not all here
  let done = false;

  /** `atEnd`: no more bytes will come, so a value that is not all here will not be. */
  const scan = (chunk: Buffer, atEnd: boolean): void => {
    const text = pending + chunk.toString('latin1');
    let from = 0;
    for (;;) {
      const at = text.indexOf(marker, from);
      if (at < 0) {
        pending = text.slice(Math.max(from, text.length - marker.length + 1));
        return;
      }
      const after = text.slice(at + marker.length, at + marker.length + WINDOW);
      const match = VALUE[kind].exec(after);
      if (match) {
        done = true;
        pending = '';
        onModel(decodedValue(kind, match[1]!));
        return;
      }
      if (!atEnd && after.length < WINDOW && MAY_FOLLOW[kind].test(after)) {
        pending = text.slice(at);
        return;
      }
      from = at + 1; // not the field (`"model": {…}`, a file's bytes): the next one may start inside it
    }
  };

  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      if (!done) scan(chunk, false);
      callback(null, chunk);
    },
    flush(callback: TransformCallback) {
      if (!done && pending !== '') scan(Buffer.alloc(0), true);
      callback();
    },
  });
}

/** A value matched in latin1 text: its UTF-8 text, unescaped (JSON) or trimmed (a multipart part). */
function decodedValue(kind: BodyKind, latin1: string): string {
  const raw = Buffer.from(latin1, 'latin1').toString('utf8');
  return kind === 'json' ? unescapeJson(raw) : raw.trim();
}

/** The first `"model": "…"` of JSON bytes read as latin1 text (the two ends of a large answer, say). */
export function jsonModelIn(latin1: string): string | null {
  const match = JSON_MODEL.exec(latin1);
  return match ? decodedValue('json', match[1]!) : null;
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
