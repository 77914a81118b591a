/**
 * Loading on first use (issue #19): a module a request may never need (an admin area's service,
 * the migrations of a database already up to date) is imported when it is first called for, not
 * when the server starts, so an idle server does not hold its code.
 */

/**
 * `load` run once, on the first call; every later call gets the same promise. A failed load is
 * not kept: the call that failed rejects with its error, and the next call tries again.
 */
export function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    if (!pending) {
      pending = load();
      pending.catch(() => {
        pending = undefined;
      });
    }
    return pending;
  };
}

/** `lazy`, with the loaded value also at hand without a promise once a load has succeeded. */
export interface LazyModule<T> {
  (): Promise<T>;
  /** The value once a load has succeeded; undefined before (and while a load is under way). */
  loaded(): T | undefined;
}

/**
 * A module imported on first use, for code on a hot path: `m.loaded() ?? (await m())` waits for
 * the import the first time only, and awaits nothing once it is loaded. Like `lazy`, a failed
 * import is not kept: the next call imports again.
 */
export function lazyModule<T>(load: () => Promise<T>): LazyModule<T> {
  let value: T | undefined;
  const get = lazy(async () => (value = await load()));
  return Object.assign(get, { loaded: () => value });
}

/** An object whose every property is a method returning a promise: a service. */
export type AsyncService<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => Promise<R> : never;
};

/**
 * A service made by `create` on the first call of any of its methods (`create` imports the
 * module that implements it). Every method returns a promise already, so a caller sees the same
 * results and the same errors; the first call also waits for the import (a failed import is its
 * error, and the next call imports again). It has no properties of its own until then: call its
 * methods, never spread it or list its keys.
 */
export function lazyService<T extends AsyncService<T>>(create: () => Promise<T>): T {
  const service = lazy(create);
  const methods = new Map<PropertyKey, (...args: unknown[]) => Promise<unknown>>();
  return new Proxy({} as T, {
    get(_target, name) {
      // Not a promise (`await` and `Promise.resolve` look for `then`), nor anything keyed by a symbol.
      if (name === 'then' || typeof name === 'symbol') return undefined;
      let method = methods.get(name);
      if (!method) {
        method = async (...args: unknown[]) => {
          const target = (await service()) as Record<PropertyKey, (...args: unknown[]) => Promise<unknown>>;
          return target[name]!(...args);
        };
        methods.set(name, method);
      }
      return method;
    },
  });
}
