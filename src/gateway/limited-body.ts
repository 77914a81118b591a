import { Transform, type Readable } from 'node:stream';
import { AppError } from '../lib/errors.js';

/**
 * A streamed request body (multipart, pass-through) counted as it flows to the provider and cut
 * at `limit` bytes: past it the stream fails with PAYLOAD_TOO_LARGE, which aborts the upstream
 * request mid-body. A declared Content-Length over the limit is refused before this, unread.
 */
export function limitedBody(payload: Readable, limit: number): Readable {
  let seen = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > limit)
        callback(
          new AppError(
            'PAYLOAD_TOO_LARGE',
            `The request body is larger than max_body_bytes (${limit}); it was cut there.`,
          ),
        );
      else callback(null, chunk);
    },
  });
  payload.once('error', (error) => counted.destroy(error));
  return payload.pipe(counted);
}
