import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type ProxyAnswer = { status: number; body: unknown } | 'hang' | 'destroy';

/**
 * A model-configs proxy on 127.0.0.1: answers `answers[path]` (404 for other paths) and
 * records every path asked, so tests can count what reached it.
 */
export async function startFakeProxy(answers: Record<string, ProxyAnswer> = {}) {
  const hits: string[] = [];
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.push(path);
    const answer = answers[path];
    if (answer === 'hang') return void hanging.add(res);
    if (answer === 'destroy') return void req.socket.destroy();
    const { status, body } = answer ?? { status: 404, body: { error: 'not found' } };
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    answers,
    hits,
    async close() {
      for (const res of hanging) res.destroy();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The reference gateway's pricing document for one model, in USD cents per token. */
export const referencePrice = (request: number, response: number, cacheRead?: number) => ({
  pricing_config: {
    pay_as_you_go: {
      request_token: { price: request },
      response_token: { price: response },
      ...(cacheRead === undefined ? {} : { cache_read_input_token: { price: cacheRead } }),
    },
    currency: 'USD',
  },
});
