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
 * Whether the JSON text nests objects and arrays deeper than `max`, found by one linear scan
 * (no recursion, no allocation) before the text is parsed. Brackets inside strings do not
 * count; strings are skipped with indexOf, so the scan costs about what parsing does or less.
 * Malformed JSON is left to the parser to refuse.
 */
export function exceedsJsonDepth(text: Uint8Array | string, max: number = MAX_JSON_DEPTH): boolean {
  return typeof text === 'string' ? scanText(text, max) : scanBytes(text, max);
}

function scanBytes(bytes: Uint8Array, max: number): boolean {
  const length = bytes.length;
  let depth = 0;
  for (let i = 0; i < length; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      // Jump to the closing quote: the next one not escaped by an odd run of backslashes.
      do {
        i = bytes.indexOf(QUOTE, i + 1);
        if (i === -1) return false;
      } while (escaped(bytes, i));
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

function scanText(text: string, max: number): boolean {
  const length = text.length;
  let depth = 0;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      do {
        i = text.indexOf('"', i + 1);
        if (i === -1) return false;
      } while (escapedText(text, i));
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

function escaped(bytes: Uint8Array, quoteAt: number): boolean {
  let run = 0;
  for (let j = quoteAt - 1; bytes[j] === BACKSLASH; j--) run++;
  return run % 2 === 1;
}

function escapedText(text: string, quoteAt: number): boolean {
  let run = 0;
  for (let j = quoteAt - 1; text.charCodeAt(j) === BACKSLASH; j--) run++;
  return run % 2 === 1;
}

export const jsonTooDeepMessage = (max: number = MAX_JSON_DEPTH) =>
  `Request body nests objects and arrays deeper than ${max} levels, the limit.`;
