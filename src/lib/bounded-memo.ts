/**
 * `compute`, remembered for up to `max` distinct keys and computed each time past that. For pure
 * functions of strings that clients send the same on every request (a custom host, a path, the
 * provider's URL made from them): worked out once instead of per request, with memory bounded
 * whatever clients send. A key whose computation throws is not remembered.
 */
export function boundedMemo<V>(max: number, compute: (key: string) => V): (key: string) => V {
  const known = new Map<string, V>();
  return (key) => {
    const remembered = known.get(key);
    if (remembered !== undefined) return remembered;
    const value = compute(key);
    if (known.size < max) known.set(key, value);
    return value;
  };
}
