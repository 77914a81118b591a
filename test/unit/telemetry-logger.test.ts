import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, prettyFor } from '../../src/telemetry/logger.js';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(chunk.toString('utf8'));
      callback();
    },
  });
  return { lines, logger: createLogger({ level: 'info', pretty: false, destination }) };
}

describe('server log lines', () => {
  it('redact secret-looking fields at any depth and passwords in URLs, and keep errors readable', () => {
    const { lines, logger } = capture();
    let deep: Record<string, unknown> = { client_secret: 'PLANTED-1', note: 'kept' };
    for (let i = 0; i < 40; i++) deep = { level: deep };
    logger.warn(
      { deep, password: 'PLANTED-2', target: 'https://ops:PLANTED-3@llm.internal/v1', err: new Error('boom') },
      'provider failed',
    );
    const line = lines.join('');
    for (const secret of ['PLANTED-1', 'PLANTED-2', 'PLANTED-3']) expect(line).not.toContain(secret);
    const parsed = JSON.parse(line) as { err: { message: string; stack: string }; target: string };
    expect(parsed.err.message).toBe('boom');
    expect(parsed.err.stack).toContain('Error: boom');
    expect(parsed.target).toContain('@llm.internal/v1');
    expect(line).toContain('kept');
  });
});

describe('log_format', () => {
  it('auto is pretty on a terminal and JSON otherwise; json and pretty are what they say', () => {
    expect(prettyFor('auto', true)).toBe(true);
    expect(prettyFor('auto', false)).toBe(false);
    expect(prettyFor('json', true)).toBe(false);
    expect(prettyFor('pretty', false)).toBe(true);
  });
});
