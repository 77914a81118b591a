import { replaceAtSchemes } from './url-authority.js';

/**
 * What is stored for people to read later (audit records, logs) passes through
 * `redactSecrets` first: values under secret-looking names become `[REDACTED]`, at any depth.
 *
 * A name is secret-looking when, written in snake_case (`apiKey`, `api-key` and `Api_Key` are
 * all `api_key`), it is one of the words below or ends in `_<word>`, or it ends in `_key`
 * (`subscription_key`, `access_key`, `x_api_key`) unless it is one of the ordinary `_key` names.
 * A bare `key` is not secret because it also names ordinary fields (a condition's key); routes
 * whose bodies carry a secret under such a name list it as an extra field. Plurals
 * (`max_tokens`, `api_keys`) are counts and settings, not secrets.
 */
const SECRET_WORD =
  /(^|_)(password|passwd|passphrase|pwd|secret|token|authorization|credentials?|cookie|apikey|service_account(_json)?|connection_string|dsn)$/;
const ORDINARY_KEYS: ReadonlySet<string> = new Set([
  'value_key',
  'cache_key',
  'partition_key',
  'dedupe_key',
  'sort_key',
  'group_key',
  'idempotency_key',
  'public_key',
  'masked_key',
  'primary_key',
  'foreign_key',
  'lookup_key',
  'routing_key',
  'virtual_key',
  'object_key',
  'metadata_key',
  'tag_key',
]);
export const REDACTED = '[REDACTED]';

/** `apiKey`, `API-Key`, `api.key` → `api_key`. */
export function snakeName(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .toLowerCase();
}

export function isSecretField(name: string, extra: readonly string[] = []): boolean {
  if (extra.includes(name)) return true;
  const snake = snakeName(name);
  return SECRET_WORD.test(snake) || (snake.endsWith('_key') && !ORDINARY_KEYS.has(snake));
}

/** `scheme://user:password@host` keeps its user and loses its password. */
const URL_USERINFO = /([a-z][a-z0-9+.-]*:\/\/[^/?#@\s:]*):[^/?#@\s]*@/iy;
export const redactUrlPassword = (text: string): string =>
  text.includes('@') ? replaceAtSchemes(text, URL_USERINFO, (m) => `${m[1]}:${REDACTED}@`) : text;

type Slot = { parent: Record<string, unknown> | unknown[]; at: string | number; value: unknown };

/** Sets a field as data, so that a field named `__proto__` stays a field. */
function put(parent: Record<string, unknown> | unknown[], at: string | number, value: unknown): void {
  Object.defineProperty(parent, at, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * A copy of `value` with secrets replaced, built without recursion so that no depth can
 * overflow the stack. Cycles become `[Circular]`; values JSON cannot hold (bigint, binary)
 * become short strings, so the copy always serialises. Fields keep their order.
 */
export function redactSecrets(value: unknown, extra: readonly string[] = []): unknown {
  const root: unknown[] = [undefined];
  const stack: Slot[] = [{ parent: root, at: 0, value }];
  const seen = new WeakSet<object>();
  while (stack.length > 0) {
    const { parent, at, value: inner } = stack.pop()!;
    const copy = copyOf(inner, seen);
    put(parent, at, copy.value);
    if (!copy.children) continue;
    const container = copy.value as Record<string, unknown>;
    for (const [name, child] of copy.children) {
      const secret = typeof name === 'string' && child !== null && child !== undefined && isSecretField(name, extra);
      put(container, name, secret ? REDACTED : null);
      if (!secret) stack.push({ parent: container, at: name, value: child });
    }
  }
  return root[0];
}

/**
 * One level of the copy: scalars as they are, containers empty with the children still to copy.
 * JSON input has no shared objects, so a container met twice is a cycle (or, from other input,
 * a repeat, shown the same way: nothing is expanded twice).
 */
function copyOf(
  value: unknown,
  seen: WeakSet<object>,
): { value: unknown; children?: Array<[string | number, unknown]> } {
  if (typeof value === 'string') return { value: redactUrlPassword(value) };
  if (typeof value === 'bigint') return { value: value.toString() };
  if (typeof value === 'function' || typeof value === 'symbol') return { value: undefined };
  if (value === null || typeof value !== 'object') return { value };
  if (seen.has(value)) return { value: '[Circular]' };
  seen.add(value);
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return { value: `[binary ${value.byteLength} bytes]` };
  if (Array.isArray(value))
    return {
      value: new Array<unknown>(value.length).fill(null),
      children: value.map((item, i): [number, unknown] => [i, item]),
    };
  if (value instanceof Date) return { value: Number.isNaN(value.getTime()) ? null : value.toISOString() };
  if (value instanceof Map || value instanceof Set)
    return {
      value: {},
      children:
        value instanceof Map
          ? [...value.entries()].map(([k, v]): [string, unknown] => [String(k), v])
          : [...value].map((v, i): [number, unknown] => [i, v]),
    };
  return { value: {}, children: Object.entries(value) };
}

/**
 * JSON text of a value already redacted; never throws. JSON.stringify recurses and overflows on
 * a few thousand levels, so deeper values are written without recursion.
 */
export function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    try {
      return stringifyWithoutRecursion(value);
    } catch {
      return JSON.stringify({ unrecorded: 'the value could not be serialised' });
    }
  }
}

type Piece = { text: string } | { value: unknown };

/** JSON.stringify's output for plain data (what redactSecrets returns), with an explicit stack. */
function stringifyWithoutRecursion(value: unknown): string {
  const out: string[] = [];
  const stack: Piece[] = [{ value }];
  while (stack.length > 0) {
    const piece = stack.pop()!;
    if ('text' in piece) {
      out.push(piece.text);
      continue;
    }
    const inner = piece.value;
    if (inner === null || typeof inner !== 'object') {
      out.push(JSON.stringify(inner) ?? 'null');
      continue;
    }
    const pieces: Piece[] = [];
    if (Array.isArray(inner)) {
      pieces.push({ text: '[' });
      inner.forEach((item, i) => pieces.push(...(i > 0 ? [{ text: ',' }] : []), { value: item }));
      pieces.push({ text: ']' });
    } else {
      pieces.push({ text: '{' });
      const fields = Object.entries(inner).filter(
        ([, v]) => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol',
      );
      fields.forEach(([name, v], i) =>
        pieces.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(name)}:` }, { value: v }),
      );
      pieces.push({ text: '}' });
    }
    for (let i = pieces.length - 1; i >= 0; i--) stack.push(pieces[i]!);
  }
  return out.join('');
}
