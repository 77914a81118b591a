import type { JsonPath } from './extract.js';

/**
 * A copy of `body` with the text at each path replaced. The input is never changed: the
 * runner keeps the body each check saw, and a later check must see the new one only.
 */
export function withTexts(body: unknown, changes: readonly { path: JsonPath; text: string }[]): unknown {
  const copy: unknown = structuredClone(body);
  for (const { path, text } of changes) setAt(copy, path, text);
  return copy;
}

/** Sets `value` at `path` (which must exist up to its last step); returns the copy's root. */
export function setAt(root: unknown, path: JsonPath, value: unknown): void {
  if (path.length === 0) return;
  let node: unknown = root;
  for (const step of path.slice(0, -1)) {
    if (typeof node !== 'object' || node === null) return;
    node = (node as Record<string | number, unknown>)[step];
  }
  if (typeof node === 'object' && node !== null)
    (node as Record<string | number, unknown>)[path[path.length - 1]!] = value;
}
