import fc from 'fast-check';
import type { JsonSchema } from './openapi.js';

/** Ids the server knows, so that generated values reach the services and not only 404s. */
export interface KnownIds {
  /** uuids of existing resources (own workspace, another workspace, the organisation). */
  uuids: readonly string[];
  /** slugs and other string ids of existing resources. */
  names: readonly string[];
}

const ID_FIELD = /(^id$|_id$|^slug$|_slug$|^workspace$|^trace_id$)/;

/**
 * Values that follow `schema` (within small sizes), so that a body with one mutation is
 * refused for that mutation and not for something else. Fields that look like ids are often
 * filled with ids the server knows.
 */
export function valueFor(schema: JsonSchema, known: KnownIds, name?: string): fc.Arbitrary<unknown> {
  const plain = plainValueFor(schema, known);
  if (name && ID_FIELD.test(name) && schema.type === 'string' && !schema.enum) {
    const ids = [...known.uuids, ...known.names].filter((id) => fitsString(schema, id));
    if (ids.length > 0)
      return fc.oneof({ arbitrary: fc.constantFrom(...ids), weight: 3 }, { arbitrary: plain, weight: 1 });
  }
  return plain;
}

function plainValueFor(schema: JsonSchema, known: KnownIds): fc.Arbitrary<unknown> {
  const base = nonNullValueFor(schema, known);
  return schema.nullable ? fc.option(base, { nil: null, freq: 6 }) : base;
}

function nonNullValueFor(schema: JsonSchema, known: KnownIds): fc.Arbitrary<unknown> {
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((branch) => plainValueFor(branch, known)));
  if (schema.enum) return fc.constantFrom(...schema.enum);
  switch (schema.type) {
    case 'string':
      return stringFor(schema, known);
    case 'integer':
      return integerFor(schema);
    case 'number':
      return numberFor(schema);
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const minLength = schema.minItems ?? 0;
      const maxLength = Math.min(schema.maxItems ?? minLength + 3, minLength + 3);
      return fc.array(schema.items ? plainValueFor(schema.items, known) : fc.jsonValue({ maxDepth: 1 }), {
        minLength,
        maxLength,
      });
    }
    case 'object':
      return objectFor(schema, known);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function objectFor(schema: JsonSchema, known: KnownIds): fc.Arbitrary<unknown> {
  const properties = schema.properties ?? {};
  if (Object.keys(properties).length === 0) {
    const values =
      typeof schema.additionalProperties === 'object'
        ? plainValueFor(schema.additionalProperties, known)
        : fc.jsonValue({ maxDepth: 1 });
    return fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), values, { maxKeys: 3 });
  }
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [key, sub] of Object.entries(properties)) model[key] = valueFor(sub, known, key);
  return fc.record(model, { requiredKeys: (schema.required ?? []).filter((key) => key in properties) });
}

function fitsString(schema: JsonSchema, value: string): boolean {
  if (schema.minLength !== undefined && value.length < schema.minLength) return false;
  if (schema.maxLength !== undefined && value.length > schema.maxLength) return false;
  return schema.pattern === undefined || new RegExp(schema.pattern).test(value);
}

function stringFor(schema: JsonSchema, known: KnownIds): fc.Arbitrary<string> {
  if (schema.format === 'uuid')
    return known.uuids.length > 0
      ? fc.oneof(fc.constantFrom(...known.uuids), fc.uuid({ version: 4 }))
      : fc.uuid({ version: 4 });
  if (schema.format === 'date-time')
    return fc
      .date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2030-12-31T00:00:00Z'), noInvalidDate: true })
      .map((d) => d.toISOString());
  if (schema.format === 'email')
    return fc.stringMatching(/^[a-z][a-z0-9]{0,10}$/).map((local) => `${local}@example.test`);
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.min(schema.maxLength ?? minLength + 24, minLength + 24);
  if (schema.pattern !== undefined) {
    return fc
      .stringMatching(new RegExp(schema.pattern))
      .filter((s) => s.length >= minLength && s.length <= (schema.maxLength ?? Infinity));
  }
  return fc.oneof(
    { arbitrary: fc.string({ minLength, maxLength }), weight: 4 },
    { arbitrary: fc.string({ minLength, maxLength, unit: 'grapheme' }), weight: 1 },
  );
}

function bounds(schema: JsonSchema, step: number): { min: number; max: number } {
  let min = schema.minimum ?? -1_000_000;
  let max = schema.maximum ?? 1_000_000;
  if (schema.exclusiveMinimum) min += step;
  if (schema.exclusiveMaximum) max -= step;
  return { min, max };
}

function integerFor(schema: JsonSchema): fc.Arbitrary<number> {
  const { min, max } = bounds(schema, 1);
  const lo = Math.ceil(Math.max(min, Number.MIN_SAFE_INTEGER));
  const hi = Math.floor(Math.min(max, Number.MAX_SAFE_INTEGER));
  const small = fc.integer({ min: Math.max(lo, Math.min(hi, -100)), max: Math.min(hi, Math.max(lo, 1000)) });
  return fc.oneof({ arbitrary: small, weight: 6 }, fc.constant(lo), fc.constant(hi));
}

function numberFor(schema: JsonSchema): fc.Arbitrary<number> {
  const { min, max } = bounds(schema, 1e-6);
  return fc.oneof(
    { arbitrary: fc.double({ min, max, noNaN: true, noDefaultInfinity: true }), weight: 6 },
    fc.constant(min),
    fc.constant(max),
  );
}
