import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import type { GuardrailLookup, RequestGuardrails, ResolvedGuardrail } from '../../guardrails/store/index.js';
import type { GuardrailServerOptions } from '../../guardrails/types.js';
import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { andThen, type MaybePromise } from '../../lib/maybe-promise.js';
import type { GatewayConfig } from '../config/schema.js';
import type { GatewayReply, GatewayRequest, GatewayRoute } from '../exchange.js';
import type { RequestLogDraft } from '../request-log-draft.js';
import type { Leaf } from '../routing/router.js';
import { holdDoneForVerdict } from '../sse-relay.js';
import {
  deniedBody,
  HOOKS_FAILED_STATUS,
  verdictEventOf,
  withHookResults,
  withHookResultsAfter,
} from './hook-results.js';
import {
  GuardrailRun,
  headerRecord,
  unavailableGuardrails,
  type GuardrailFeedback,
  type HookPass,
  type LazySignal,
} from './request-guardrails.js';
import { createVerdictStream, holdStream } from './stream-guard.js';

/** A feedback entry with the request it belongs to. */
export interface FeedbackEntry extends GuardrailFeedback {
  organisationId: string;
  workspaceId: string;
  apiKeyId: string;
}

/** What the gateway needs to run guardrails; absent when GUARDRAILS_ENABLED is OFF. */
export interface GatewayGuardrails {
  lookup: GuardrailLookup;
  server: GuardrailServerOptions;
  clock: Clock;
  recordFeedback(entry: FeedbackEntry): void;
}

const BODILESS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

/** The most of a stream an output guardrail with `deny` holds back before it judges. */
const MAX_HELD_STREAM_BYTES = 16 * 1024 * 1024;

/** A target's guardrails deny the request: it ends with 446, the router tries no other target. */
export class GuardrailDenial extends Error {
  constructor() {
    super('A guardrail denied the request.');
  }
}

type AnswerGuard = (payload: unknown, reply: GatewayReply) => unknown;

/**
 * Answers whose payloads the gateway's onSend hook passes through the request's output
 * guardrails, by response; an entry goes when its answer is sent, or when the request is
 * recorded (an answer that never reached onSend). Not a WeakMap: a WeakMap entry whose key had
 * reached the old generation (a response still in flight across two minor GCs) kept its value
 * (the guard, and through it the request, its bodies and its log draft) alive through every minor
 * GC until a major one; guarded requests promoted ~6.5 KB each, and paid for the major GCs.
 */
const answerGuards = new Map<object, AnswerGuard>();

/**
 * The onSend step of JSON routes: the answer through the request's output guardrails, if any.
 * A promise only when a guardrail judges the answer; otherwise the answer is sent in the same
 * step (an onSend hook that completes later makes fastify wait for the response to finish before
 * the handler's promise settles: an end-of-stream watcher per request).
 */
export function guardAnswer(reply: GatewayReply, payload: unknown): unknown {
  const guard = answerGuards.get(reply.raw);
  if (guard === undefined) return payload;
  answerGuards.delete(reply.raw);
  return guard(payload, reply);
}

/** How many answers wait for their guardrails (tests: none are left once requests have ended). */
export function waitingAnswerGuards(): number {
  return answerGuards.size;
}

interface StartInput {
  route: GatewayRoute;
  organisationId: string;
  workspaceId: string;
  apiKeyId: string;
  config: GatewayConfig | null;
  request: GatewayRequest;
  metadata: Readonly<Record<string, string>>;
  model: string | undefined;
  traceId: string;
  /**
   * The request's abort signal, made when a check first reads it (most never do), and whether
   * the request was aborted, asked without making it.
   */
  signal: () => LazySignal;
  /** The log record, which keeps the bodies as changed by checks (redaction visible in the log). */
  draft: RequestLogDraft;
  /** Bytes of each body the log keeps (0: none). */
  capture: number;
}

/**
 * The guardrails of one request: the workspace defaults and the config's own, then, per
 * attempt, those of the target on the way (each target may carry its own). Null when none
 * apply. A reference to a guardrail that is gone refuses the request; so does a route whose
 * body cannot be inspected (it would otherwise pass unguarded).
 */
export function startGuardrails(
  deps: GatewayGuardrails,
  input: StartInput,
): RequestGuard | null | Promise<RequestGuard | null> {
  const found = deps.lookup.forRequest({
    organisationId: input.organisationId,
    workspaceId: input.workspaceId,
    ...(input.config ? { node: input.config } : {}),
  });
  // Without a promise when the lookup answered from memory (most requests).
  return found instanceof Promise ? found.then((loaded) => guardOf(deps, input, loaded)) : guardOf(deps, input, found);
}

function guardOf(deps: GatewayGuardrails, input: StartInput, found: RequestGuardrails): RequestGuard | null {
  if (found.missing.length > 0) throw unavailableGuardrails(found.missing);
  const targetsHaveTheirOwn = input.config ? hasNestedGuardrails(input.config) : false;
  if (found.before.length === 0 && found.after.length === 0 && !targetsHaveTheirOwn) return null;
  if (input.route.body !== 'json') {
    // Nothing to inspect (a list, an upload): guardrails judge prompts and answers.
    const type = String(input.request.headers['content-type'] ?? '');
    if (BODILESS.has(input.request.method) || !type.includes('json')) return null;
    throw new AppError(
      'GUARDRAILS_UNSUPPORTED_ROUTE',
      `Guardrails apply to this request, but ${input.request.method} ${input.request.url.split('?')[0]} passes its body through uninspected; use the OpenAI-format route (e.g. /v1/chat/completions).`,
    );
  }
  const run = new GuardrailRun(
    {
      clock: deps.clock,
      server: deps.server,
      recordFeedback: (feedback) => {
        // Field by field: a spread of each entry showed in profiles of guarded requests.
        const entry = feedback as FeedbackEntry;
        entry.organisationId = input.organisationId;
        entry.workspaceId = input.workspaceId;
        entry.apiKeyId = input.apiKeyId;
        deps.recordFeedback(entry);
      },
    },
    {
      endpoint: input.route.endpointType,
      // Only some checks (jwt) read the headers: copied when one does.
      headers: () => headerRecord(input.request.headers),
      metadata: input.metadata,
      model: input.model,
      traceId: input.traceId,
      signal: input.signal(),
    },
  );
  // No guardrail can add a result after the request's input guardrails: none on the answer or a target, none async.
  const resultsFinal =
    !targetsHaveTheirOwn && found.after.length === 0 && !found.before.some((guardrail) => guardrail.actions.async);
  return new RequestGuard(deps, input, run, found.before, found.after, resultsFinal);
}

function hasNestedGuardrails(config: GatewayConfig): boolean {
  const below = (node: GatewayConfig): boolean =>
    (node.targets ?? []).some(
      (target) =>
        Boolean(
          target.input_guardrails?.length ||
          target.output_guardrails?.length ||
          target.before_request_hooks?.length ||
          target.after_request_hooks?.length,
        ) || below(target),
    );
  return below(config);
}

export class RequestGuard {
  /** Output guardrails per leaf label, learnt as targets are tried. */
  private readonly afterByLeaf = new Map<string, ResolvedGuardrail[]>();
  /** The request body after the request-level input guardrails (what every target starts from). */
  private requestBody: Record<string, unknown> | null = null;
  /** Whether the logged request body is one a target's own guardrails changed. */
  private loggedTargetBody = false;
  /** The JSON answer the onSend step parsed, with the bytes it came from. */
  private answer: { bytes: Buffer; json: Record<string, unknown> } | null = null;
  /** The response whose answer waits in `answerGuards`, until it is sent or the request recorded. */
  private answerKey: object | null = null;

  constructor(
    private readonly deps: GatewayGuardrails,
    private readonly input: StartInput,
    readonly run: GuardrailRun,
    private readonly before: ResolvedGuardrail[],
    private readonly after: ResolvedGuardrail[],
    /** The input guardrails' results are all the request will have (see `guardOf`). */
    private readonly resultsFinal: boolean,
  ) {}

  /**
   * The request-level input guardrails. Returns the body to send on (changed or not), or null
   * when denied. A changed body replaces the client's in the log, denied or not: what a check
   * redacted is not kept.
   */
  checkRequest(
    json: Record<string, unknown>,
  ): Record<string, unknown> | null | Promise<Record<string, unknown> | null> {
    this.requestBody = json;
    if (this.before.length === 0) return json;
    // No promise when no check waits (the built-ins without network or the regex worker).
    const pass = this.run.runNow('beforeRequestHook', this.before, { request: json });
    return pass instanceof Promise ? pass.then((done) => this.checkedRequest(done)) : this.checkedRequest(pass);
  }

  private checkedRequest(pass: HookPass): Record<string, unknown> | null {
    if (pass.changed) this.logRequest(pass.request);
    // When no further guardrail can add a result, these are the results the answer and the log
    // carry: serialised now rather than when the answer is sent. At the end of a stream the same
    // serialisation cost more (profiles of guarded streams: ~15 µs a request, against ~11 µs here).
    if (this.resultsFinal) this.run.visibleJson();
    if (pass.denied) return null;
    if (pass.changed) this.requestBody = pass.request as Record<string, unknown>;
    return this.requestBody;
  }

  /**
   * A target's own input guardrails, before that target is called; its output guardrails are
   * kept for when it answers. Throws GuardrailDenial when one denies.
   */
  async checkTarget(leaf: Leaf, json: Record<string, unknown>, provider: string): Promise<Record<string, unknown>> {
    const before: ResolvedGuardrail[] = [];
    const after: ResolvedGuardrail[] = [...this.after];
    for (const node of leaf.settings.guardrailNodes) {
      const found = await this.deps.lookup.forRequest({
        organisationId: this.input.organisationId,
        workspaceId: this.input.workspaceId,
        node,
        withWorkspaceDefaults: false,
      });
      if (found.missing.length > 0) throw unavailableGuardrails(found.missing);
      before.push(...found.before);
      after.push(...found.after);
    }
    this.afterByLeaf.set(leaf.label, after);
    if (before.length === 0) {
      // An earlier target's guardrails changed the logged body; this target gets the request's.
      if (this.loggedTargetBody) this.logRequest(this.requestBody ?? json);
      this.loggedTargetBody = false;
      return json;
    }
    const pass = await this.run.run('beforeRequestHook', before, { request: json }, provider);
    if (pass.changed || this.loggedTargetBody) this.logRequest(pass.request);
    this.loggedTargetBody = pass.changed;
    if (pass.denied) throw new GuardrailDenial();
    return pass.changed ? (pass.request as Record<string, unknown>) : json;
  }

  private logRequest(body: unknown): void {
    if (this.input.capture <= 0) return;
    this.input.draft.requestBody = Buffer.from(JSON.stringify(body)).subarray(0, this.input.capture).toString('utf8');
  }

  /** Answers 446 with every result so far. */
  deny(reply: GatewayReply, draft: RequestLogDraft): unknown {
    const body = deniedBody(this.run.visible());
    draft.errorCode = 'HOOKS_DENIED';
    draft.errorMessage = body.error.message.slice(0, 2000);
    return reply.code(446).type('application/json; charset=utf-8').send(body);
  }

  /**
   * From here on the answer passes the output guardrails of the leaf that served it (or of the
   * request, for a cached answer or no config), then carries every result: a JSON answer in
   * `hook_results` (246 when a guardrail failed), a stream in one event before `[DONE]`.
   */
  guardAnswer(
    reply: GatewayReply,
    draft: RequestLogDraft,
    requestJson: unknown,
    leafLabel: string | null,
    provider: string | undefined,
  ) {
    const after = (leafLabel !== null ? this.afterByLeaf.get(leafLabel) : undefined) ?? this.after;
    this.answerKey = reply.raw;
    answerGuards.set(reply.raw, (payload, sending) => {
      if (sending.statusCode >= 300) return payload;
      if (payload instanceof Readable) return this.guardStream(payload, sending, draft, requestJson, after, provider);
      return this.guardJson(payload, sending, draft, requestJson, after, provider);
    });
  }

  /** A JSON answer with every result; a promise only when output guardrails judge it first. */
  private guardJson(
    payload: unknown,
    reply: GatewayReply,
    draft: RequestLogDraft,
    requestJson: unknown,
    after: ResolvedGuardrail[],
    provider: string | undefined,
  ): unknown {
    const known = this.answer;
    const parsed = known !== null && known.bytes === payload ? known.json : parsedPayload(payload);
    if (parsed === null) return payload; // not a JSON object (speech audio): nothing to judge or to carry results in
    if (Buffer.isBuffer(payload)) this.answer = { bytes: payload, json: parsed };
    if (after.length === 0) return this.withResults(payload, parsed, parsed, reply);
    return this.judgeJson(payload, parsed, reply, draft, requestJson, after, provider);
  }

  private async judgeJson(
    payload: unknown,
    parsed: Record<string, unknown>,
    reply: GatewayReply,
    draft: RequestLogDraft,
    requestJson: unknown,
    after: ResolvedGuardrail[],
    provider: string | undefined,
  ): Promise<unknown> {
    const pass = await this.run.run(
      'afterRequestHook',
      after,
      { request: requestJson, response: { json: parsed, status: reply.statusCode } },
      provider,
    );
    if (pass.denied) return this.deniedPayload(reply, draft);
    let body = parsed;
    if (pass.changed && pass.response && typeof pass.response === 'object') {
      body = pass.response as Record<string, unknown>;
      // The log keeps the answer as the client got it (redacted), not the provider's.
      if (this.input.capture > 0)
        draft.responseBody = Buffer.from(JSON.stringify(body)).subarray(0, this.input.capture).toString('utf8');
    }
    return this.withResults(payload, parsed, body, reply);
  }

  /** The answer (`body`, or the `payload` it was parsed from as `parsed`) with `hook_results`. */
  private withResults(
    payload: unknown,
    parsed: Record<string, unknown>,
    body: Record<string, unknown>,
    reply: GatewayReply,
  ): unknown {
    if (!this.run.anyVisible() && body === parsed) return payload;
    if (this.run.anyFailed()) reply.code(HOOKS_FAILED_STATUS);
    // The provider's bytes, unchanged, with the results after them: no second serialisation.
    if (body === parsed && Buffer.isBuffer(payload))
      return withHookResultsAfter(payload, parsed, this.run.visibleJson());
    return withHookResults(body, this.run.visibleJson());
  }

  /** The provider's answer, parsed when its attempt was judged: the onSend step need not parse it again. */
  knowAnswer(bytes: Buffer, json: Record<string, unknown>): void {
    this.answer = { bytes, json };
  }

  /**
   * The provider's JSON answer as the onSend step parsed it, when `bytes` are what it parsed:
   * the usage read after the reply needs no parse of its own.
   */
  parsedAnswer(bytes: Buffer): Record<string, unknown> | null {
    return this.answer?.bytes === bytes ? this.answer.json : null;
  }

  /** A stream with the verdict event before `[DONE]`; a promise only when a guardrail holds it back. */
  private guardStream(
    stream: Readable,
    reply: GatewayReply,
    draft: RequestLogDraft,
    requestJson: unknown,
    after: ResolvedGuardrail[],
    provider: string | undefined,
  ): unknown {
    const judge = async (text: string) => {
      if (after.length === 0) return { denied: false };
      return this.run.run(
        'afterRequestHook',
        after,
        { request: requestJson, response: { streamText: text, status: reply.statusCode } },
        provider,
      );
    };
    const holds = after.some((g) => g.actions.deny && !g.actions.async);
    if (!holds) {
      if (this.run.anyFailed()) reply.code(HOOKS_FAILED_STATUS);
      if (after.length === 0) {
        // Without an output guardrail nobody reads the text: events pass unparsed, and the
        // verdict event is the results so far, serialised once for the stream and the log. A
        // relayed stream sends it itself, without a stream in between.
        const verdict = () => verdictEventOf(this.run.visibleJson());
        if (holdDoneForVerdict(stream, verdict)) return stream;
        return stream.pipe(createVerdictStream(verdict, { collectText: false }));
      }
      return stream.pipe(
        createVerdictStream(async (text) => {
          await judge(text);
          return verdictEventOf(this.run.visibleJson());
        }),
      );
    }
    return this.holdStream(stream, reply, draft, judge);
  }

  /** A guardrail that may deny the answer: nothing is sent until it has judged the whole stream. */
  private async holdStream(
    stream: Readable,
    reply: GatewayReply,
    draft: RequestLogDraft,
    judge: (text: string) => Promise<{ denied: boolean }>,
  ): Promise<unknown> {
    const held = await holdStream(stream, MAX_HELD_STREAM_BYTES);
    if (held.overflowed) {
      draft.errorCode = 'HOOKS_DENIED';
      draft.errorMessage = `The stream went past ${MAX_HELD_STREAM_BYTES} bytes, the most an output guardrail with deny holds back.`;
      return this.deniedPayload(reply, draft);
    }
    const pass = await judge(held.text);
    // The client's first byte comes only now: the log's time to first byte says so.
    draft.ttfbMs = null;
    draft.markFirstByte(performance.now());
    if (pass.denied) return this.deniedPayload(reply, draft);
    if (this.run.anyFailed()) reply.code(HOOKS_FAILED_STATUS);
    // Judged already: the events only pass, with the verdict before [DONE].
    return Readable.from([held.events]).pipe(
      createVerdictStream(() => verdictEventOf(this.run.visibleJson()), { collectText: false }),
    );
  }

  private deniedPayload(reply: GatewayReply, draft: RequestLogDraft): string {
    const body = deniedBody(this.run.visible());
    draft.errorCode = 'HOOKS_DENIED';
    draft.errorMessage = body.error.message.slice(0, 2000);
    reply.code(446);
    reply.header('content-type', 'application/json; charset=utf-8');
    return JSON.stringify(body);
  }

  /** Writes the results and the verdict into the log record, once async guardrails are done. */
  record(draft: RequestLogDraft): MaybePromise<void> {
    // An answer that never reached onSend (the client left first) leaves nothing behind.
    if (this.answerKey !== null) answerGuards.delete(this.answerKey);
    this.answerKey = null;
    return andThen(this.run.settledJson(), ({ json, verdict }) => {
      draft.hookResults = json;
      draft.guardrailVerdict = verdict;
    });
  }
}

function parsedPayload(payload: unknown): Record<string, unknown> | null {
  const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
  return text === null ? null : parseObject(text);
}

function parseObject(text: string): Record<string, unknown> | null {
  if (!text.startsWith('{')) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
