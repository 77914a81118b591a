import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends one request exactly as written (HTTP clients would resolve `..`, `\` and `//` before
 * sending) with `connection: close`, and reads the answer to the end. Chunked bodies are
 * returned as they came, chunk sizes included.
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = '',
): Promise<RawAnswer> {
  const { port } = new URL(baseUrl);
  const lines = Object.entries({
    host: 'localhost',
    ...headers,
    ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}),
    connection: 'close',
  })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return new Promise((resolve, reject) => {
    // Written, not ended: a half-closed connection makes the server abort the request in flight.
    const socket = connect(Number(port), '127.0.0.1', () =>
      socket.write(`${method} ${path} HTTP/1.1\r\n${lines}\r\n${body}`),
    );
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('end', () => resolve(parseAnswer(Buffer.concat(chunks).toString('utf8'))));
    socket.on('error', reject);
  });
}

export function parseAnswer(text: string): RawAnswer {
  const headEnd = text.indexOf('\r\n\r\n');
  const head = text.slice(0, headEnd).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(head[0]?.split(' ')[1]), headers, body: text.slice(headEnd + 4) };
}

/**
 * Opens a request with only its head sent, so a test can see what the server answers before
 * any of the body arrives; `sendBody` streams `total` bytes chunked (the head must say
 * `transfer-encoding: chunked`) until the server answers or closes; `write` sends more bytes
 * (a pipelined request).
 */
export function openRequest(baseUrl: string, head: string) {
  const { port } = new URL(baseUrl);
  const socket = connect(Number(port), '127.0.0.1');
  const chunks: Buffer[] = [];
  let closed = false;
  let firstByte: () => void = () => {};
  const answered = new Promise<void>((resolve) => (firstByte = resolve));
  socket.on('data', (d: Buffer) => {
    chunks.push(d);
    firstByte();
  });
  socket.on('error', () => {}); // a reset after the answer is expected; the answer is what counts
  const done = new Promise<void>((resolve) =>
    socket.on('close', () => {
      closed = true;
      firstByte();
      resolve();
    }),
  );
  socket.write(head);
  return {
    answered,
    get received() {
      return chunks.length > 0;
    },
    async sendBody(total: number, chunkSize = 256 * 1024): Promise<number> {
      const chunk = Buffer.alloc(chunkSize, 0x61);
      let sent = 0;
      while (sent < total && chunks.length === 0 && !closed) {
        const frame = Buffer.concat([Buffer.from(`${chunkSize.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
        sent += chunkSize;
        if (!socket.write(frame))
          await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), answered]);
      }
      if (sent >= total && !closed && chunks.length === 0) socket.write('0\r\n\r\n');
      return sent;
    },
    /** Everything the server sent, once it closed the connection. */
    async answer(): Promise<RawAnswer> {
      await done;
      return parseAnswer(Buffer.concat(chunks).toString('utf8'));
    },
    /** The raw text, once the server closed the connection (several pipelined answers). */
    async text(): Promise<string> {
      await done;
      return Buffer.concat(chunks).toString('utf8');
    },
    write: (text: string) => socket.write(text),
    close: () => socket.destroy(),
  };
}
