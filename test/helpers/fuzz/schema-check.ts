import { Deep } from './mutations.js';
import type { JsonSchema } from './openapi.js';

/**
 * The ways `value` certainly breaks `schema`, as JSON paths. Only checks that cannot be wrong
 * are made (formats other than uuid and date-time are not judged), so an empty answer means
 * "valid as far as the document says", never "invalid". The fuzz suite uses it to know which
 * generated bodies the server must refuse.
 */
export function violations(schema: JsonSchema, given: unknown, path = '$'): string[] {
  const value = given instanceof Deep ? given.unwrap() : given;
  if (value === null) return acceptsNull(schema) ? [] : [`${path}: null`];
  if (schema.anyOf) {
    const branches = schema.anyOf.map((branch) => violations(branch, value, path));
    return branches.some((v) => v.length === 0) ? [] : [`${path}: matches no anyOf branch`];
  }
  if (schema.enum) return schema.enum.some((allowed) => allowed === value) ? [] : [`${path}: not in enum`];
  switch (schema.type) {
    case undefined:
      return [];
    case 'string':
      return typeof value === 'string' ? stringViolations(schema, value, path) : [`${path}: not a string`];
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value)) return [`${path}: not an integer`];
      return numberViolations(schema, value, path);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
        ? numberViolations(schema, value, path)
        : [`${path}: not a number`];
    case 'boolean':
      return typeof value === 'boolean' ? [] : [`${path}: not a boolean`];
    case 'array': {
      if (!Array.isArray(value)) return [`${path}: not an array`];
      const found: string[] = [];
      if (schema.minItems !== undefined && value.length < schema.minItems)
        found.push(`${path}: fewer than ${schema.minItems} items`);
      if (schema.maxItems !== undefined && value.length > schema.maxItems)
        found.push(`${path}: more than ${schema.maxItems} items`);
      // The first problem is enough: bodies can hold 100,000 items.
      for (let i = 0; schema.items && found.length === 0 && i < value.length; i++)
        found.push(...violations(schema.items, value[i], `${path}[${i}]`));
      return found;
    }
    case 'object': {
      if (typeof value !== 'object' || Array.isArray(value)) return [`${path}: not an object`];
      const record = value as Record<string, unknown>;
      const found: string[] = [];
      for (const key of schema.required ?? []) if (record[key] === undefined) found.push(`${path}.${key}: missing`);
      for (const [key, item] of Object.entries(record)) {
        if (found.length > 0) break;
        const known = schema.properties?.[key];
        if (known) found.push(...violations(known, item, `${path}.${key}`));
        else if (schema.additionalProperties === false) found.push(`${path}.${key}: unknown field`);
        else if (typeof schema.additionalProperties === 'object')
          found.push(...violations(schema.additionalProperties, item, `${path}.${key}`));
      }
      return found;
    }
    default:
      return [];
  }
}

function acceptsNull(schema: JsonSchema): boolean {
  if (schema.nullable || schema.type === 'null') return true;
  if (schema.anyOf) return schema.anyOf.some(acceptsNull);
  if (schema.enum) return schema.enum.includes(null);
  return schema.type === undefined;
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

function stringViolations(schema: JsonSchema, value: string, path: string): string[] {
  const found: string[] = [];
  if (schema.minLength !== undefined && value.length < schema.minLength)
    found.push(`${path}: shorter than ${schema.minLength}`);
  if (schema.maxLength !== undefined && value.length > schema.maxLength)
    found.push(`${path}: longer than ${schema.maxLength}`);
  if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value))
    found.push(`${path}: does not match ${schema.pattern}`);
  if (schema.format === 'date-time' && (!DATE_TIME.test(value) || Number.isNaN(Date.parse(value))))
    found.push(`${path}: not a date-time`);
  return found;
}

function numberViolations(schema: JsonSchema, value: number, path: string): string[] {
  const found: string[] = [];
  if (schema.minimum !== undefined && (schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum))
    found.push(`${path}: below minimum`);
  if (schema.maximum !== undefined && (schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum))
    found.push(`${path}: above maximum`);
  return found;
}
