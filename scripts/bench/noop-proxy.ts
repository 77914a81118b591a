import { createServer, type IncomingHttpHeaders } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

/**
 * The floor the benchmark compares svcgw with: a proxy that does nothing a proxy could skip.
 * `node:http` in, undici out, the request and response bodies streamed through untouched,
 * nothing parsed, no auth, no logs. Whatever svcgw spends above this is svcgw's own.
 * Prints `{"url":"http://127.0.0.1:N"}` once listening; serves until SIGTERM or SIGINT.
 *
 *   node dist/scripts/bench/noop-proxy.js --upstream http://127.0.0.1:PORT [--port 0]
 */
const { values } = parseArgs({
  options: {
    upstream: { type: 'string' },
    port: { type: 'string', default: '0' },
  },
});
const upstream = values.upstream;
const port = Number(values.port);
if (!upstream || !/^http:\/\/127\.0\.0\.1:\d+$/.test(upstream) || !Number.isInteger(port) || port < 0) {
  process.stderr.write('usage: node dist/scripts/bench/noop-proxy.js --upstream http://127.0.0.1:PORT [--port 0]\n');
  process.exit(2);
}

// Hop-by-hop headers belong to one connection and are never forwarded (RFC 9110 7.6.1).
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'host',
]);

function forwardable(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

// Keep-alive connections to the provider, as any real proxy (and svcgw) keeps them.
const pool = new Pool(upstream, { connections: 128, keepAliveTimeout: 60_000 });

const server = createServer((req, res) => {
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  pool
    .request({ path: req.url ?? '/', method, headers: forwardable(req.headers), body: hasBody ? req : null })
    .then(async (answer) => {
      res.writeHead(answer.statusCode, forwardable(answer.headers));
      await pipeline(answer.body, res);
    })
    .catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`noop-proxy: ${(error as Error).message}\n`);
      } else {
        res.destroy();
      }
    });
});
server.keepAliveTimeout = 60_000;

server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${bound}` })}\n`);
});

const stop = () => {
  server.close();
  server.closeAllConnections();
  void pool.close().finally(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
