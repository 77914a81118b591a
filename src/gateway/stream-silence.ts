import type { Readable } from 'node:stream';
import { AppError } from '../lib/errors.js';

/** What a relay tells its watch: an event came, or the stream is over. */
export interface SilenceWatch {
  event(): void;
  stop(): void;
}

/**
 * Fails a provider's stream that sends no event for `timeoutMs` (`upstream_body_timeout_ms`):
 * keep-alive comments or pings keep a connection alive, not a stream. Silence is checked every
 * half time-out rather than timed from each event, so that an event costs one increment, not a
 * timer refresh; a stream fails after one to one and a half time-outs without one. Time the
 * client holds the stream paused (reading slowly) is the client's, not counted.
 */
export function watchSilence(upstream: Readable, timeoutMs: number): SilenceWatch {
  let events = 0;
  let eventsAtCheck = 0;
  let quietChecks = 0;
  const check = () => {
    if (upstream.destroyed) return;
    quietChecks = events !== eventsAtCheck || upstream.isPaused() ? 0 : quietChecks + 1;
    eventsAtCheck = events;
    if (quietChecks < 2) return void timer.refresh();
    upstream.destroy(
      new AppError(
        'UPSTREAM_TIMEOUT',
        `The provider's stream sent no event within upstream_body_timeout_ms (${timeoutMs} ms).`,
      ),
    );
  };
  const timer = setTimeout(check, Math.ceil(timeoutMs / 2)).unref();
  const stop = () => clearTimeout(timer);
  upstream.once('close', stop);
  return { event: () => void events++, stop };
}
