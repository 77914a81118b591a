/**
 * The text a check looks at, chosen by hook: the request's before the provider is called,
 * the answer's after. Content checks (regexMatch, wordCount, …) judge the current text: the
 * last message of a request (earlier turns were judged when they were sent) and the first
 * choice of an answer (or the whole streamed text). PII and rewriting checks use every slot.
 */
import type { CheckResult, GuardrailContext } from '../types.js';
import { requestTextSlots, responseTextSlots, type JsonPath, type TextSlot } from './extract.js';
import { withTexts } from './write.js';

export interface SideTexts {
  side: 'request' | 'response';
  slots: TextSlot[];
  /** False for a streamed answer: its text has already gone to the client. */
  writable: boolean;
}

export function sideTexts(context: GuardrailContext): SideTexts {
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
  const { side, slots } = sideTexts(context);
  if (slots.length === 0) return '';
  const group = side === 'request' ? slots[slots.length - 1]!.group : slots[0]!.group;
  return slots
    .filter((slot) => slot.group === group)
    .map((slot) => slot.text)
    .join('\n');
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
