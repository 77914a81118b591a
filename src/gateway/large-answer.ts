import { usageFromBody, type TokenUsage } from '../providers/usage.js';
import { jsonModelIn } from './model-sniffer.js';

/**
 * A successful JSON answer past this size is not parsed whole on the event loop (JSON.parse of
 * 60 MB of embeddings holds every other request for most of a second): its framing is checked,
 * its bytes relayed as they came, and its `usage` and `model` read from where providers put them.
 */
export const PARSE_WHOLE_LIMIT = 1024 * 1024;

/** OpenAI puts `usage` (and an embeddings list's `model`) after the data: this much of the end is searched. */
const TAIL_BYTES = 64 * 1024;
/** A chat answer's `model` comes first: this much of the start is searched. */
const HEAD_BYTES = 4 * 1024;

const isSpace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/** Whether the bytes are framed as one JSON object (`{` … `}`), the check a large answer gets instead of a parse. */
export function framedAsObject(bytes: Buffer): boolean {
  let start = 0;
  let end = bytes.length - 1;
  while (start <= end && isSpace(bytes[start]!)) start++;
  while (end >= start && isSpace(bytes[end]!)) end--;
  return end > start && bytes[start] === 0x7b && bytes[end] === 0x7d;
}

/** The usage and model of a large answer, read from its start and its end without parsing the rest. */
export function largeAnswerFacts(bytes: Buffer): { usage: TokenUsage | null; model: string | null } {
  const tail = bytes.subarray(Math.max(0, bytes.length - TAIL_BYTES)).toString('latin1');
  const head = bytes.subarray(0, HEAD_BYTES).toString('latin1');
  return { usage: usageIn(tail), model: jsonModelIn(head) ?? jsonModelIn(tail) };
}

/** The last `"usage": {…}` of the text, parsed on its own. */
function usageIn(text: string): TokenUsage | null {
  const at = text.lastIndexOf('"usage"');
  if (at < 0) return null;
  const open = text.indexOf('{', at);
  if (open < 0 || !/^"usage"\s*:\s*$/.test(text.slice(at, open))) return null;
  const close = matchingBrace(text, open);
  if (close < 0) return null;
  try {
    return usageFromBody({ usage: JSON.parse(text.slice(open, close + 1)) as unknown });
  } catch {
    return null;
  }
}

/** The index of the `}` that closes the `{` at `open`, skipping strings; -1 when it is not there. */
function matchingBrace(text: string, open: number): number {
  let depth = 0;
  let inString = false;
  for (let i = open; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b) depth++;
    else if (c === 0x7d && --depth === 0) return i;
  }
  return -1;
}
