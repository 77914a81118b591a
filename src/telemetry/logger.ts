import { pino, type Logger } from 'pino';
import { redactSecrets } from '../lib/redact.js';

export type { Logger };

/** Header and field paths that may carry secrets; pino replaces them before a line is written. */
export const REDACT_PATHS = [
  'req.headers["x-service-api-key"]',
  'req.headers.authorization',
  'req.headers["x-service-virtual-key"]',
  'headers["x-service-api-key"]',
  'headers.authorization',
  '*.api_key',
  '*.key',
  '*.secret',
  '*.password',
];

/** JSON lines on stdout; pretty-printed only when a person is watching a terminal. */
export function createLogger(options: {
  level: string;
  pretty?: boolean;
  destination?: NodeJS.WritableStream;
}): Logger {
  const pretty = options.pretty ?? (process.stdout.isTTY === true && options.destination === undefined);
  const base = {
    level: options.level,
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    // Lines are few (no line per request), so each logged object can afford the full redaction
    // rule at any depth: secret-looking names and passwords in URLs, as in audit records.
    formatters: { log: redactLogObject },
    base: { service: 'svcgw' },
  };
  if (pretty)
    return pino({
      ...base,
      transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l' } },
    });
  return options.destination ? pino(base, options.destination as pino.DestinationStream) : pino(base);
}

/** Errors are left to pino's own serializer (which reads their non-enumerable message and stack). */
function redactLogObject(object: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(object)) {
    // Redacted with its own name, so that a top-level `password` is caught too.
    out[name] = value instanceof Error ? value : (redactSecrets({ [name]: value }) as Record<string, unknown>)[name];
  }
  return out;
}
