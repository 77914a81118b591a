import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { util, type Dispatcher } from 'undici';

/**
 * How much of an answer a call waits for before handing it back: its headers (a body relayed as
 * it comes), its first body bytes (a stream, judged once it has begun), or its whole body, of
 * which at most `keep` bytes are kept (the rest is not read: the call is stopped there).
 */
export type ReadPlan = 'headers' | 'first-bytes' | { keep: number };

export interface UpstreamResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The body still to come, read as a stream; null when it was read whole. */
  body: Readable | null;
  /** The whole body (cut at the plan's `keep`); null when it is read as a stream. */
  bytes: Buffer | null;
  /** A stream awaited until its first bytes that ended without any. */
  endedEmpty?: true;
}

type Abort = (reason?: Error) => void;

/** The reason a call is stopped with (client gone, request_timeout): what an aborted AbortSignal carries. */
export const callAborted = (): Error => new DOMException('This operation was aborted', 'AbortError');
const noop = () => undefined;

/**
 * One call to a provider, as an undici dispatch handler: it reads a JSON answer into one buffer
 * and relays a stream chunk by chunk, with none of `request()`'s per-call machinery (URL parse,
 * async resource, abort-signal listener, body stream for bodies read whole).
 * `abort` stops the call at any point: before it is sent, while waiting, or while its body streams.
 * It speaks the handler interface undici 7's core itself calls (onConnect, onHeaders, …), which its
 * types mark deprecated: a handler of the newer one (onRequestStart, …) is adapted to this one per
 * call (UnwrapHandler). Revisit when undici's core changes over.
 */
export class UpstreamCall implements Dispatcher.DispatchHandler {
  readonly answer: Promise<UpstreamResponse>;
  private settle!: (response: UpstreamResponse) => void;
  private fail!: (error: Error) => void;
  private settled = false;
  private stop: Abort | null = null;
  private reason: Error | null = null;
  private read: ReadPlan = 'headers';
  private response: UpstreamResponse | null = null;
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly plan: (statusCode: number, headers: IncomingHttpHeaders) => ReadPlan,
    /** A request body streamed through (a raw route's): destroyed when the call fails, as it cannot be sent again. */
    private readonly sending: Readable | null = null,
    /**
     * What a transport failure becomes for a body already streaming (a pass-through body that
     * fails before its first bytes reach the client is answered with it); `answer` rejects
     * with the failure itself.
     */
    private readonly failure: (error: Error) => Error = (error) => error,
  ) {
    this.answer = new Promise<UpstreamResponse>((resolve, reject) => {
      this.settle = resolve;
      this.fail = reject;
    });
  }

  abort(reason: Error): void {
    this.reject(reason);
    const body = this.response?.body;
    if (body)
      destroy(body, reason); // which stops the call, unless the body has ended
    else if (this.stop) this.stop(reason);
    else this.reason ??= reason; // not on a connection yet: stopped as soon as it is
  }

  onConnect(abort: Abort): void {
    if (this.reason) abort(this.reason);
    else this.stop = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true; // 1xx: informational, the answer follows
    const headers = util.parseHeaders(rawHeaders) as IncomingHttpHeaders;
    this.read = this.plan(statusCode, headers);
    const body = this.read === 'headers' || this.read === 'first-bytes' ? this.stream(resume) : null;
    this.response = { statusCode, headers, body, bytes: null };
    if (this.read === 'headers') this.resolve();
    return true;
  }

  onData(chunk: Buffer): boolean {
    const response = this.response!;
    if (response.body) {
      const more = response.body.push(chunk);
      if (this.read === 'first-bytes') this.resolve();
      return more;
    }
    const keep = (this.read as { keep: number }).keep;
    if (this.size + chunk.length <= keep) {
      this.chunks.push(chunk);
      this.size += chunk.length;
      return true;
    }
    this.chunks.push(chunk.subarray(0, keep - this.size));
    this.size = keep;
    this.complete();
    this.stop?.(); // the rest is not wanted
    return false;
  }

  onComplete(): void {
    const body = this.response?.body;
    if (body) {
      if (!this.settled && this.read === 'first-bytes') this.response!.endedEmpty = true;
      body.push(null);
      this.resolve();
    } else this.complete();
  }

  onError(error: Error): void {
    const body = this.response?.body;
    // After the handlers already queued for the body, as undici's own request() does.
    if (body) queueMicrotask(() => destroy(body, this.failure(error)));
    if (this.sending) destroy(this.sending, error);
    this.reject(error);
  }

  private stream(resume: () => void): Readable {
    const stop = () => this.stop?.();
    return new Readable({
      highWaterMark: 64 * 1024,
      read: resume,
      destroy(error, callback) {
        if (!this.readableEnded) stop();
        callback(error);
      },
    });
  }

  private complete(): void {
    this.response!.bytes = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
    this.chunks = [];
    this.resolve();
  }

  private resolve(): void {
    if (this.settled) return;
    this.settled = true;
    this.settle(this.response!);
  }

  private reject(error: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.fail(error);
  }
}

function destroy(body: Readable, error: Error): void {
  if (!body.destroyed) body.on('error', noop).destroy(error);
}
