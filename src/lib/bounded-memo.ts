/**
 * `compute`, remembered per key, for pure functions of strings that clients send the same on
 * every request (a custom host, a path, the provider's URL made from them): worked out once
 * instead of per request. At most `max` keys are kept; the next new key starts the memory
 * afresh, so that keys seen once (pass-through paths with ids in them) never crowd out the few
 * every request repeats for long. A key whose computation throws is not remembered.
 */
export function boundedMemo<V>(max: number, compute: (key: string) => V): (key: string) => V {
  const known = new Map<string, V>();
  return (key) => {
    const remembered = known.get(key);
    if (remembered !== undefined) return remembered;
    const value = compute(key);
    if (known.size >= max) known.clear();
    known.set(key, value);
    return value;
  };
}
