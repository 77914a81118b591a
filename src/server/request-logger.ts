import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js';

/**
 * A request's logger (`request.log`, `reply.log`) that becomes the pino child fastify would have
 * made, with the same bindings and options, on its first call. fastify makes that child for every
 * request, before any hook runs, and pino serialises and redacts its bindings then: ~1.5 KB of
 * garbage and a redaction pass per gateway request (docs/benchmarks.md, "Memory under load"),
 * while a request logs through it only when something goes wrong (refusals, errors). Lines
 * written through it are the child's own.
 */
export class DeferredRequestLogger implements FastifyBaseLogger {
  private child_: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  /** The pino child, made on first use. */
  private logger(): FastifyBaseLogger {
    return (this.child_ ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.child_?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger().level = level;
  }

  fatal(...args: unknown[]): void {
    const logger = this.logger();
    Reflect.apply(logger.fatal, logger, args);
  }

  error(...args: unknown[]): void {
    const logger = this.logger();
    Reflect.apply(logger.error, logger, args);
  }

  warn(...args: unknown[]): void {
    const logger = this.logger();
    Reflect.apply(logger.warn, logger, args);
  }

  info(...args: unknown[]): void {
    const logger = this.logger();
    Reflect.apply(logger.info, logger, args);
  }

  debug(...args: unknown[]): void {
    const logger = this.logger();
    Reflect.apply(logger.debug, logger, args);
  }

  trace(...args: unknown[]): void {
    const logger = this.logger();
    Reflect.apply(logger.trace, logger, args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger().child(bindings, options);
  }
}

/** fastify's `childLoggerFactory`: the request's logger, made only if the request logs. */
export function deferredChildLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new DeferredRequestLogger(logger, bindings, options);
}
