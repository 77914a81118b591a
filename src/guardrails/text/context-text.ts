/**
 * The text a check looks at, chosen by hook: the request's before the provider is called,
 * the answer's after. Content checks (regexMatch, wordCount, …) judge the current text: the
 * last message of a request (earlier turns were judged when they were sent) and the first
 * choice of an answer (or the whole streamed text). PII and rewriting checks use every slot.
 */
import type { CheckResult, GuardrailContext, TextCache } from '../types.js';
import { requestTextSlots, responseTextSlots, type JsonPath, type TextSlot } from './extract.js';
import { withTexts } from './write.js';

export interface SideTexts {
  side: 'request' | 'response';
  slots: TextSlot[];
  /** False for a streamed answer: its text has already gone to the client. */
  writable: boolean;
}

/** What a hook run's checks read, kept for the body it was read from. */
interface TextMemo extends TextCache {
  body: unknown;
  side: SideTexts | null;
  current: string | null;
}

/**
 * A cache for the texts of one hook run (GuardrailContext.texts). The slots handed out are
 * shared by the run's checks, which only read them (a rewrite builds new bodies, see write.ts).
 */
export function createTextCache(): TextCache {
  const memo: TextMemo = { textCache: true, body: undefined, side: null, current: null };
  return memo;
}

/** The body the texts of this hook come from: the request's before the provider, the answer's after. */
function bodyOf(context: GuardrailContext): unknown {
  if (context.hook === 'beforeRequestHook') return context.request.json;
  const response = context.response;
  return response?.json !== undefined ? response.json : (response?.streamText ?? '');
}

/** The context's memo, emptied when the body changed since it was filled. */
function memoFor(context: GuardrailContext): TextMemo | null {
  const memo = context.texts as TextMemo | undefined;
  if (!memo) return null;
  const body = bodyOf(context);
  if (memo.body !== body) {
    memo.body = body;
    memo.side = null;
    memo.current = null;
  }
  return memo;
}

export function sideTexts(context: GuardrailContext): SideTexts {
  const memo = memoFor(context);
  if (memo?.side) return memo.side;
  const side = readSideTexts(context);
  if (memo) memo.side = side;
  return side;
}

function readSideTexts(context: GuardrailContext): SideTexts {
  if (context.hook === 'beforeRequestHook')
    return { side: 'request', slots: requestTextSlots(context.endpoint, context.request.json), writable: true };
  const response = context.response;
  if (response?.json !== undefined)
    return { side: 'response', slots: responseTextSlots(context.endpoint, response.json), writable: true };
  const text = response?.streamText ?? '';
  return { side: 'response', slots: text ? [{ path: [], text, group: 0 }] : [], writable: false };
}

/** The text content checks judge (see above). */
export function currentText(context: GuardrailContext): string {
  const memo = memoFor(context);
  if (memo?.current != null) return memo.current;
  const { side, slots } = sideTexts(context);
  let text = '';
  if (slots.length > 0) {
    const group = side === 'request' ? slots[slots.length - 1]!.group : slots[0]!.group;
    text = slots
      .filter((slot) => slot.group === group)
      .map((slot) => slot.text)
      .join('\n');
  }
  if (memo) memo.current = text;
  return text;
}

/** Rewritten texts as the `transformed` part of a result, or undefined when nothing changed. */
export function rewrite(
  context: GuardrailContext,
  changes: readonly { path: JsonPath; text: string }[],
): CheckResult['transformed'] | undefined {
  if (changes.length === 0) return undefined;
  if (context.hook === 'beforeRequestHook') return { request: withTexts(context.request.json, changes) };
  if (context.response?.json === undefined) return undefined;
  return { response: withTexts(context.response.json, changes) };
}
