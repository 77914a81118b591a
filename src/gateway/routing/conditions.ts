import type { ConditionQuery } from '../config/schema.js';

/** What a condition can look at: the request's metadata and its body's parameters. */
export interface ConditionFacts {
  metadata: Readonly<Record<string, string>> | null;
  params: Readonly<Record<string, unknown>> | null;
}

/**
 * Whether a conditional-routing query matches: every key must hold. `metadata.x` and
 * `params.x` (dotted paths reach nested fields) compare by equality or by operators; `$and`
 * and `$or` combine sub-queries. A missing field matches only `$ne`, `$nin` and `{$eq: null}`.
 */
export function matchesQuery(query: ConditionQuery, facts: ConditionFacts): boolean {
  for (const [key, expected] of Object.entries(query)) {
    if (key === '$and') {
      if (!(expected as ConditionQuery[]).every((sub) => matchesQuery(sub, facts))) return false;
    } else if (key === '$or') {
      if (!(expected as ConditionQuery[]).some((sub) => matchesQuery(sub, facts))) return false;
    } else if (!matchesField(fieldValue(key, facts), expected)) {
      return false;
    }
  }
  return true;
}

function fieldValue(key: string, facts: ConditionFacts): unknown {
  const dot = key.indexOf('.');
  const root = key.slice(0, dot) === 'metadata' ? facts.metadata : facts.params;
  let value: unknown = root;
  for (const part of key.slice(dot + 1).split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function matchesField(actual: unknown, expected: unknown): boolean {
  if (expected === null || typeof expected !== 'object') return same(actual, expected);
  for (const [op, operand] of Object.entries(expected as Record<string, unknown>)) {
    if (!applies(op, actual, operand)) return false;
  }
  return true;
}

/** Metadata values are strings: `"3"` equals `3`, so numeric conditions work on metadata too. */
function same(actual: unknown, expected: unknown): boolean {
  if (actual === undefined) return expected === null;
  if (typeof actual === 'string' && typeof expected === 'number')
    return actual.trim() !== '' && Number(actual) === expected;
  if (typeof actual === 'string' && typeof expected === 'boolean') return actual === String(expected);
  return actual === expected;
}

function compare(actual: unknown, operand: unknown): number | null {
  if (actual === undefined || actual === null) return null;
  if (typeof operand === 'number') {
    const n =
      typeof actual === 'number' ? actual : typeof actual === 'string' && actual.trim() !== '' ? Number(actual) : NaN;
    return Number.isNaN(n) ? null : n - operand;
  }
  if (typeof operand === 'string' && typeof actual === 'string')
    return actual < operand ? -1 : actual > operand ? 1 : 0;
  return null;
}

const regexCache = new Map<string, RegExp>();

function applies(op: string, actual: unknown, operand: unknown): boolean {
  switch (op) {
    case '$eq':
      return same(actual, operand);
    case '$ne':
      return !same(actual, operand);
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte': {
      const c = compare(actual, operand);
      if (c === null) return false;
      return op === '$gt' ? c > 0 : op === '$gte' ? c >= 0 : op === '$lt' ? c < 0 : c <= 0;
    }
    case '$in':
      return (operand as unknown[]).some((item) => same(actual, item));
    case '$nin':
      return !(operand as unknown[]).some((item) => same(actual, item));
    case '$regex': {
      if (typeof actual !== 'string') return false;
      let re = regexCache.get(operand as string);
      if (!re) {
        re = new RegExp(operand as string);
        if (regexCache.size < 1000) regexCache.set(operand as string, re);
      }
      return re.test(actual);
    }
    default:
      return false;
  }
}
