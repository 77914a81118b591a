/**
 * How deeply JSON bodies may nest. Parsing is iterative, but what runs on a parsed body
 * (validation, prototype checks, serialisation) recurses; a body nested 10,000 deep would
 * overflow the stack there. Real requests (messages, tools, JSON schemas) nest a few dozen
 * levels at most.
 */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * Whether the JSON text nests objects and arrays deeper than `max`, found by one linear scan of
 * the bytes (no recursion, no allocation) before the text is parsed. Brackets inside strings do
 * not count. Malformed JSON is left to the parser to refuse.
 */
export function exceedsJsonDepth(text: Uint8Array | string, max: number = MAX_JSON_DEPTH): boolean {
  const bytes = typeof text === 'string' ? null : text;
  const length = text.length;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < length; i++) {
    const c = bytes ? bytes[i]! : (text as string).charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

export const jsonTooDeepMessage = (max: number = MAX_JSON_DEPTH) => `Request body nests objects and arrays deeper than ${max} levels, the limit.`;
