/**
 * Work done before an audited request's transaction opens, handed to its handler. An audited
 * handler runs inside the request's database transaction, which on SQLite holds the one
 * connection until the audit record is written, so it must make no upstream call; reading an
 * agent's card happens in the route's preValidation step instead (the caller is authenticated
 * by then), and the handler stores what it found.
 */
export function createPrefetch<T>() {
  const results = new WeakMap<object, T>();
  return {
    keep(request: object, value: T): void {
      results.set(request, value);
    },
    /** The result kept for this request, if its preValidation step made one. */
    take(request: object): T | undefined {
      const value = results.get(request);
      results.delete(request);
      return value;
    },
  };
}
