/**
 * Shapes for values that may be secrets, so that messages and logs can point at them without
 * repeating them: a key pasted into the wrong header must not come back in the error about it.
 */

/** The first four characters and an ellipsis: enough for the sender to recognise the value. */
export function maskValue(value: string): string {
  return value.length <= 4 ? '…' : `${value.slice(0, 4)}…`;
}

/** `scheme://user:password@` → `scheme://***@`, wherever URLs appear in the text. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s?#]*@/gi;

export function withoutUrlCredentials(text: string): string {
  return text.includes('@') ? text.replace(URL_USERINFO, '$1***@') : text;
}
