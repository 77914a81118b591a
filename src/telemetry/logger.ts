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

export type LogFormat = 'auto' | 'json' | 'pretty';

/** Whether lines are pretty-printed: `auto` means only when a person is watching a terminal. */
export function prettyFor(format: LogFormat, stdoutIsTty = process.stdout.isTTY === true): boolean {
  return format === 'pretty' || (format === 'auto' && stdoutIsTty);
}

/** JSON lines on stdout; pretty-printed only when a person is watching a terminal (or asked for). */
export function createLogger(options: {
  level: string;
  pretty?: boolean;
  destination?: NodeJS.WritableStream;
}): Logger {
  const pretty = options.pretty ?? (process.stdout.isTTY === true && options.destination === undefined);
  const base = {
    level: options.level,
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    // Each logged object gets the full redaction rule at any depth: secret-looking names and
    // passwords in URLs, as in audit records. Access lines are flat objects of a dozen scalars.
    formatters: { log: redactLogObject },
    base: { service: 'svcgw' },
  };
  if (pretty)
    return pino({
      ...base,
      // pino-pretty runs in a worker thread: formatting never blocks a request.
      // One line per entry (fields after the message), so that access lines read as a list.
      transport: {
        target: 'pino-pretty',
        options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', singleLine: true, ignore: 'service,pid,hostname' },
      },
    });
  if (options.destination) return pino(base, options.destination as pino.DestinationStream);
  // Buffered, asynchronous writes to stdout: an access line per request must not wait for a slow
  // pipe or disk. pino flushes what is buffered when the process exits. A reader that stops
  // reading costs at most 16 MiB of buffer; past it lines are dropped rather than memory grown.
  return pino(base, pino.destination({ dest: 1, sync: false, maxLength: 16 * 1024 * 1024 }));
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
