/** Character classes of ASCII, by UTF-16 code unit: what one-pass scanners test instead of a pattern. */

/** A-Z a-z */
export function isAsciiLetter(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90);
}

/** A-Z a-z 0-9 */
export function isAsciiAlphanumeric(code: number): boolean {
  return isAsciiLetter(code) || (code >= 48 && code <= 57);
}

/** `\w` of a pattern without the `u` flag: A-Z a-z 0-9 _ */
export function isWordChar(code: number): boolean {
  return isAsciiAlphanumeric(code) || code === 95;
}
