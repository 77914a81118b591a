/**
 * JSON with object keys sorted at every depth, so that two requests that differ only in the
 * order of their fields produce the same text (and the same cache key). Arrays keep their
 * order: the order of messages, tools or inputs changes the answer. Values JSON cannot hold
 * (undefined, functions) are dropped exactly as JSON.stringify drops them.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return value;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
  return sorted;
}
