import fc from 'fast-check';
import { included } from './known-defects.js';
import type { JsonSchema } from './openapi.js';

/** A place inside a body and the schema that governs it. */
interface Site {
  path: Array<string | number>;
  schema: JsonSchema;
}

/** Every value of `body` that `schema` describes, the root included. */
function sitesOf(schema: JsonSchema, value: unknown, path: Array<string | number> = []): Site[] {
  const sites: Site[] = [{ path, schema }];
  const branch = schema.anyOf?.find((b) => b.type === (Array.isArray(value) ? 'array' : typeof value)) ?? schema;
  if (Array.isArray(value) && branch.items)
    value.forEach((item, i) => sites.push(...sitesOf(branch.items!, item, [...path, i])));
  else if (value !== null && typeof value === 'object' && branch.properties) {
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      const sub = branch.properties[key];
      if (sub) sites.push(...sitesOf(sub, item, [...path, key]));
    }
  }
  return sites;
}

function setAt(body: unknown, path: Array<string | number>, replace: (old: unknown) => unknown): unknown {
  if (path.length === 0) return replace(body);
  const copy = (Array.isArray(body) ? [...body] : { ...(body as Record<string, unknown>) }) as Record<
    string | number,
    unknown
  >;
  const [head, ...rest] = path as [string | number, ...Array<string | number>];
  copy[head] = setAt(copy[head], rest, replace);
  return copy;
}

/**
 * `[[[…1]]]` or `{"a":{"a":…1}}`, `depth` levels deep. Kept as a marker and written as text
 * by `toJsonText`: JSON.stringify of 5,000 levels can overflow the test's own stack.
 */
export class Deep {
  constructor(
    readonly depth: number,
    readonly shape: 'array' | 'object',
  ) {}

  /** One level unwrapped, for checks that walk a value along its schema. */
  unwrap(): unknown {
    const inner = this.depth <= 1 ? 1 : new Deep(this.depth - 1, this.shape);
    return this.shape === 'array' ? [inner] : { a: inner };
  }

  text(): string {
    return this.shape === 'array'
      ? `${'['.repeat(this.depth)}1${']'.repeat(this.depth)}`
      : `${'{"a":'.repeat(this.depth)}1${'}'.repeat(this.depth)}`;
  }
}

export const deeplyNested = (depth: number, shape: 'array' | 'object') => new Deep(depth, shape);

/** JSON text of a body that may hold `Deep` markers. */
export function toJsonText(body: unknown): string {
  const deep: Deep[] = [];
  const text =
    JSON.stringify(body, (_key, value: unknown) =>
      value instanceof Deep ? `\u0000deep${deep.push(value) - 1}\u0000` : value,
    ) ?? 'null';
  return deep.length === 0
    ? text
    : text.replace(/"\\u0000deep(\d+)\\u0000"/g, (_m, i: string) => deep[Number(i)]!.text());
}

const wrongTypes: unknown[] = ['not-a-number', 12345, -7.5, true, [], {}, [1, 'two'], { nested: { x: 1 } }];

/** One change to a value, chosen knowing its schema. */
function replacementFor(schema: JsonSchema): fc.Arbitrary<{ label: string; value: (old: unknown) => unknown }> {
  const options: Array<fc.Arbitrary<{ label: string; value: (old: unknown) => unknown }>> = [
    fc.constantFrom(...wrongTypes).map((v) => ({ label: `wrong type ${JSON.stringify(v)}`, value: () => v })),
    fc.constant({ label: 'null', value: () => null }),
    fc
      .constantFrom(...(included('deep-5000') ? [100, 5000] : [100]))
      .chain((depth) =>
        fc
          .constantFrom('array' as const, 'object' as const)
          .map((shape) => ({ label: `nested ${depth} levels (${shape})`, value: () => deeplyNested(depth, shape) })),
      ),
    fc
      .integer({ min: 10_000, max: 100_000 })
      .map((n) => ({ label: `array of ${n} items`, value: () => Array.from({ length: n }, (_, i) => i % 7) })),
    fc
      .constantFrom(1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, -1, 0, 0.5)
      .map((n) => ({ label: `number ${n}`, value: () => n })),
  ];
  if (schema.type === 'string' || schema.anyOf) {
    const long = (schema.maxLength ?? 256) + 1;
    options.push(
      fc.constantFrom(long, 70_000).map((n) => ({ label: `string of ${n} chars`, value: () => 'x'.repeat(n) })),
    );
    options.push(
      fc
        .constantFrom(
          '',
          ' ',
          '\u0000',
          '\u202e',
          'é'.normalize('NFD'),
          '../../etc',
          "'; drop table x; --",
          '%00',
          '\ud800',
        )
        .map((s) => ({ label: `odd string ${JSON.stringify(s)}`, value: () => s })),
    );
  }
  if (schema.type === 'integer' || schema.type === 'number') {
    const edges = [
      schema.minimum !== undefined ? schema.minimum - 1 : -1,
      schema.maximum !== undefined ? schema.maximum + 1 : 2 ** 63,
      1.5,
      -0,
    ];
    options.push(fc.constantFrom(...edges).map((n) => ({ label: `out of range ${n}`, value: () => n })));
  }
  if (schema.enum) options.push(fc.constant({ label: 'not in enum', value: () => 'not-in-enum' }));
  if (schema.type === 'object') {
    options.push(
      fc.constant({ label: 'unknown field', value: (old: unknown) => ({ ...(old as object), __fuzz_unknown: 'x' }) }),
    );
    for (const key of schema.required ?? []) {
      options.push(
        fc.constant({
          label: `without required ${key}`,
          // A nullable object may have been generated as null: then it is an empty one.
          value: (old: unknown) => Object.fromEntries(Object.entries(old ?? {}).filter(([k]) => k !== key)),
        }),
      );
    }
  }
  if (schema.type === 'array') {
    options.push(fc.constant({ label: 'empty array', value: () => [] }));
    options.push(
      fc.constant({
        label: 'array over maxItems',
        value: (old: unknown) =>
          Array.from({ length: (schema.maxItems ?? 1000) + 1 }, () => (old as unknown[])[0] ?? 1),
      }),
    );
  }
  return fc.oneof(...options);
}

/** A valid-ish body with exactly one change at one of its values (or none, sometimes). */
export function mutatedBody(
  schema: JsonSchema,
  valid: fc.Arbitrary<unknown>,
): fc.Arbitrary<{ body: unknown; label: string }> {
  return valid.chain((body) => {
    const sites = sitesOf(schema, body);
    return fc.oneof(
      { arbitrary: fc.constant({ body, label: 'as generated' }), weight: 1 },
      {
        arbitrary: fc.constantFrom(...sites).chain((site) =>
          replacementFor(site.schema).map((change) => ({
            body: setAt(body, site.path, change.value),
            label: `${change.label} at $${site.path.map((p) => `.${p}`).join('')}`,
          })),
        ),
        weight: 5,
      },
    );
  });
}

/** Bytes on the wire: either the JSON of a (mutated) body or a broken encoding of it. */
export interface WireBody {
  bytes: Buffer;
  contentType: string | null;
  label: string;
  /** The server must refuse this body whatever it contains. */
  brokenEnvelope: boolean;
  /** The bytes decode to the body given (so its schema violations count). */
  sameValue: boolean;
}

/** The plain JSON encoding of `body`. */
export const jsonWire = (body: unknown): WireBody => ({
  bytes: Buffer.from(toJsonText(body), 'utf8'),
  contentType: 'application/json',
  label: 'json',
  brokenEnvelope: false,
  sameValue: true,
});

/** Encodings of `body` that a JSON route must refuse or survive: malformed, mislabelled, empty, over the limit. */
export function wireBody(body: unknown, maxBodyBytes: number): fc.Arbitrary<WireBody> {
  const json = toJsonText(body);
  const utf8 = Buffer.from(json, 'utf8');
  const as = (
    label: string,
    bytes: Buffer,
    contentType: string | null,
    brokenEnvelope: boolean,
    sameValue = true,
  ): WireBody => ({ bytes, contentType, label, brokenEnvelope, sameValue });
  return fc.oneof(
    { arbitrary: fc.constant(as('json', utf8, 'application/json', false)), weight: 12 },
    {
      arbitrary: fc
        .constantFrom('application/json; charset=utf-8', 'Application/JSON')
        .map((ct) => as(`json as ${ct}`, utf8, ct, false)),
      weight: 1,
    },
    fc
      .integer({ min: 1, max: Math.max(1, json.length - 1) })
      .map((cut) => as(`json cut at ${cut}`, Buffer.from(`${json.slice(0, cut)}\u0000`), 'application/json', true)),
    fc
      .constantFrom('{"a":', "{'a':1}", 'NaN', '{"a":1}}', '[1,]', '{"a":01}', '\u00ef\u00bb\u00bf')
      .map((text) => as(`malformed ${JSON.stringify(text)}`, Buffer.from(text), 'application/json', true)),
    fc.constant(as('empty body', Buffer.alloc(0), 'application/json', true)),
    fc
      .constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/xml',
        'application/octet-stream',
      )
      .map((ct) => as(`sent as ${ct}`, utf8, ct, true)),
    fc.constant(as('no content-type', utf8, null, true)),
    fc.constant(
      as(
        'invalid UTF-8 in a string',
        Buffer.concat([
          Buffer.from('{"model":"'),
          Buffer.from([0xff, 0xfe, 0xc0, 0xaf]),
          Buffer.from(`","x":${json}}`),
        ]),
        'application/json',
        false,
        false,
      ),
    ),
    fc.constant(as('UTF-8 BOM', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8]), 'application/json', false)),
    fc.constant(as('UTF-16LE', Buffer.from(json, 'utf16le'), 'application/json; charset=utf-16le', false)),
    fc.constant(
      as(
        'over the body limit',
        Buffer.concat([utf8, Buffer.alloc(maxBodyBytes + 1 - Math.min(utf8.length, maxBodyBytes), 0x20)]),
        'application/json',
        true,
      ),
    ),
  );
}
