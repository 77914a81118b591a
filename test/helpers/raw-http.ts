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
export function rawRequest(baseUrl: string, method: string, path: string, headers: Record<string, string>, body = ''): Promise<RawAnswer> {
  const { port } = new URL(baseUrl);
  const lines = Object.entries({ host: 'localhost', ...headers, ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}), connection: 'close' })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return new Promise((resolve, reject) => {
    // Written, not ended: a half-closed connection makes the server abort the request in flight.
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(`${method} ${path} HTTP/1.1\r\n${lines}\r\n${body}`));
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
