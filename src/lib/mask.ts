import { replaceAtSchemes } from './url-authority.js';

/**
 * Shapes for values that may be secrets, so that messages and logs can point at them without
 * repeating them: a key pasted into the wrong header must not come back in the error about it.
 */

/** The first four characters and an ellipsis: enough for the sender to recognise the value. */
export function maskValue(value: string): string {
  return value.length <= 4 ? '…' : `${value.slice(0, 4)}…`;
}

/**
 * Key prefixes of the providers and of svcgw itself: a value that starts with one is a key,
 * however short. Longer values than NAME_MAX are treated as keys too (Mistral's are 32
 * characters, Azure's 32 hex digits), so only names and slugs are shown in full.
 */
const KEY_PREFIX = /^(sk|svc|pk|rk|gsk|xai|key|pplx|fw|hf|r8|nvapi|csk|AIza|AKIA|ASIA|glpat)[-_]?/i;
const NAME_MAX = 24;

/**
 * A header value as an error message may show it: a slug or provider name in full (the sender
 * needs to see which one was not found), anything that could be a key masked.
 */
export function nameOrMasked(value: string): string {
  return value.length <= NAME_MAX && /^[A-Za-z0-9_.-]*$/.test(value) && !KEY_PREFIX.test(value)
    ? value
    : maskValue(value);
}

/** `scheme://user:password@` → `scheme://***@`, wherever URLs appear in the text. */
const URL_USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^/\s?#]*@/iy;

export function withoutUrlCredentials(text: string): string {
  return text.includes('@') ? replaceAtSchemes(text, URL_USERINFO, (m) => `${m[1]}***@`) : text;
}
