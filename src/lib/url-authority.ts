/**
 * Finding `scheme://…` in free text in one pass. A pattern that starts with the scheme
 * (`/\b[a-z][a-z0-9+.-]*:\/\/…/g`) is tried by the regex engine at every word boundary and
 * reads the run of scheme characters to its end from each: `"a.".repeat(160_000)` with an `@`
 * took 22 s. Here each `://` is found once, and the pattern is tried at the one place a search
 * would have matched it first: the leftmost scheme start before it.
 */
import { isAsciiAlphanumeric, isAsciiLetter, isWordChar } from './ascii.js';

/** A-Z a-z 0-9 + . - : what a URL scheme is made of after its first letter. */
function isSchemeChar(code: number): boolean {
  return isAsciiAlphanumeric(code) || code === 43 || code === 46 || code === 45;
}

/**
 * `text` with each match of `sticky` replaced by `replace(match)`. `sticky` must have the `y`
 * flag and begin with the scheme (`[a-z][a-z0-9+.-]*:\/\/`, with `i`); it is tried, for each
 * `://`, at the leftmost scheme start after the previous match, as `text.replace` with the same
 * pattern made global and preceded by `\b` would find it.
 */
export function replaceAtSchemes(text: string, sticky: RegExp, replace: (match: RegExpExecArray) => string): string {
  let out = '';
  let copied = 0;
  for (let colon = text.indexOf('://'); colon >= 0; colon = text.indexOf('://', colon + 1)) {
    let start = colon;
    while (start > copied && isSchemeChar(text.charCodeAt(start - 1))) start--;
    // The leftmost letter at a word boundary: where `\b[a-z]` first holds in the run.
    while (
      start < colon &&
      !(isAsciiLetter(text.charCodeAt(start)) && (start === 0 || !isWordChar(text.charCodeAt(start - 1))))
    )
      start++;
    if (start === colon) continue;
    sticky.lastIndex = start;
    const match = sticky.exec(text);
    if (match === null) continue;
    out += text.slice(copied, start) + replace(match);
    copied = sticky.lastIndex;
    colon = Math.max(colon, copied - 1);
  }
  return copied === 0 ? text : out + text.slice(copied);
}
