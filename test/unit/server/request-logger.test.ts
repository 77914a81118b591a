import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load-config.js';
import { createHttpApp } from '../../../src/server/http-app.js';
import { DeferredRequestLogger } from '../../../src/server/request-logger.js';
import { createLogger } from '../../../src/telemetry/logger.js';

/** A real svcgw logger writing into an array; counts the children pino makes. */
function collectingLogger(level = 'info') {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n'))
        if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger({ level, destination });
  const made = { children: 0 };
  // pino's own hook, called for each child it makes (children of children too).
  (logger as unknown as { onChild: () => void }).onChild = () => void made.children++;
  return { logger, lines, made };
}

const withoutTime = (line: Record<string, unknown>) => ({ ...line, time: 0 });

describe('the deferred request logger', () => {
  it('makes no pino child until the request logs, then writes what the child would have written', () => {
    const deferred = collectingLogger();
    const direct = collectingLogger();
    const lazy = new DeferredRequestLogger(deferred.logger, { reqId: 'r-1' }, {});
    expect(deferred.made.children).toBe(0);
    expect(lazy.level).toBe('info');

    const child = direct.logger.child({ reqId: 'r-1' }, {});
    for (const logger of [lazy, child]) {
      logger.info({ headers: { 'x-service-api-key': 'sk-secret' }, path: '/v1/x' }, 'request refused');
      logger.warn('plain message %s', 'with an argument');
      logger.debug('below the level');
      logger.error({ err: new Error('boom') }, 'unhandled error');
    }
    expect(deferred.made.children).toBe(1);
    expect(deferred.lines).toHaveLength(3);
    expect(deferred.lines.map(withoutTime)).toEqual(direct.lines.map(withoutTime));
    expect(deferred.lines[0]).toMatchObject({ reqId: 'r-1', headers: { 'x-service-api-key': '[REDACTED]' } });
    expect(deferred.lines[1]).toMatchObject({ msg: 'plain message with an argument', level: 40 });
  });

  it("keeps the route's own level and lets the level be changed", () => {
    const { logger, lines } = collectingLogger('info');
    const lazy = new DeferredRequestLogger(logger, { reqId: 'r-2' }, { level: 'warn' });
    expect(lazy.level).toBe('warn');
    lazy.info('not written at warn');
    lazy.warn('written');
    lazy.level = 'debug';
    lazy.debug('written at debug');
    expect(lines.map((line) => line.msg)).toEqual(['written', 'written at debug']);
    expect(logger.level).toBe('info');
  });

  it("is what a request of svcgw's fastify app logs through, with the request's id", async () => {
    const { logger, lines, made } = collectingLogger();
    const config = loadConfig({ flags: { data_dir: '/nonexistent', port: 0 }, env: {} });
    const app = createHttpApp({ config, logger }, new Set());
    app.get('/quiet', async () => ({ ok: true }));
    app.get('/loud', async (request) => {
      request.log.info({ step: 'loud' }, 'a request that logs');
      return { ok: true };
    });
    await app.ready();
    // fastify makes children of its own for the instance and its plugins: only requests' count here.
    const atReady = made.children;
    try {
      for (let i = 0; i < 5; i++) expect((await app.inject({ method: 'GET', url: '/quiet' })).statusCode).toBe(200);
      expect(made.children).toBe(atReady);
      const loud = await app.inject({ method: 'GET', url: '/loud', headers: { 'x-request-id': 'loud-1' } });
      expect(loud.statusCode).toBe(200);
      expect(made.children).toBe(atReady + 1);
      expect(lines.find((line) => line.msg === 'a request that logs')).toMatchObject({ reqId: 'loud-1', step: 'loud' });
    } finally {
      await app.close();
    }
  });
});
