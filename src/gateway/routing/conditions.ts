import { testAtOnce, testWithin } from '../../guardrails/safe-regex.js';
import type { ConditionQuery } from '../config/schema.js';

/** What a condition can look at: the request's metadata and its body's parameters. */
export interface ConditionFacts {
  metadata: Readonly<Record<string, string>> | null;
  params: Readonly<Record<string, unknown>> | null;
}

/** The answers of a query's `$regex` tests: by pattern, then by the text tested. */
type RegexAnswers = ReadonlyMap<string, ReadonlyMap<string, boolean>>;
const NO_REGEX_TESTS: RegexAnswers = new Map();

/**
 * The first condition whose query matches, or undefined. Its `$regex` patterns come from
 * configs, inline ones from the client itself, and the texts from the request: a pattern that
 * backtracks (`(a+)+$`) must not hold the event loop, so those whose work is not bounded run
 * on the regex worker with its time limit (as guardrails' regexMatch does), and the answer is a
 * promise then. A test that fails there, or runs past the limit, does not match.
 */
export function firstMatch<C extends { query: ConditionQuery }>(
  conditions: readonly C[],
  facts: ConditionFacts,
): C | undefined | Promise<C | undefined> {
  const tests: Array<[string, string]> = [];
  for (const condition of conditions) regexTestsOf(condition.query, facts, tests);
  if (tests.length === 0) return conditions.find((condition) => matchesQuery(condition.query, facts, NO_REGEX_TESTS));
  const answers = new Map<string, Map<string, boolean>>();
  const waiting: Promise<void>[] = [];
  for (const [source, text] of tests) {
    let byText = answers.get(source);
    if (!byText) answers.set(source, (byText = new Map<string, boolean>()));
    if (byText.has(text)) continue;
    const now = testAtOnce(source, text);
    byText.set(text, now ?? false);
    if (now === undefined)
      waiting.push(
        testWithin(source, text).then(
          (matched) => void byText.set(text, matched),
          () => undefined, // the worker logged why
        ),
      );
  }
  const pick = () => conditions.find((condition) => matchesQuery(condition.query, facts, answers));
  return waiting.length === 0 ? pick() : Promise.all(waiting).then(pick);
}

/** Every `$regex` test `query` can make on these facts, as [pattern, text]. */
function regexTestsOf(query: ConditionQuery, facts: ConditionFacts, into: Array<[string, string]>): void {
  for (const [key, expected] of Object.entries(query)) {
    if (key === '$and' || key === '$or') {
      for (const sub of expected as ConditionQuery[]) regexTestsOf(sub, facts, into);
    } else if (expected !== null && typeof expected === 'object' && '$regex' in expected) {
      const actual = fieldValue(key, facts);
      if (typeof actual === 'string') into.push([(expected as { $regex: string }).$regex, actual]);
    }
  }
}

/**
 * Whether a conditional-routing query matches: every key must hold. `metadata.x` and
 * `params.x` (dotted paths reach nested fields) compare by equality or by operators; `$and`
 * and `$or` combine sub-queries. A missing field matches only `$ne`, `$nin` and `{$eq: null}`.
 * `$regex` reads its answer from `regex` (see `firstMatch`).
 */
function matchesQuery(query: ConditionQuery, facts: ConditionFacts, regex: RegexAnswers): boolean {
  for (const [key, expected] of Object.entries(query)) {
    if (key === '$and') {
      if (!(expected as ConditionQuery[]).every((sub) => matchesQuery(sub, facts, regex))) return false;
    } else if (key === '$or') {
      if (!(expected as ConditionQuery[]).some((sub) => matchesQuery(sub, facts, regex))) return false;
    } else if (!matchesField(fieldValue(key, facts), expected, regex)) {
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

function matchesField(actual: unknown, expected: unknown, regex: RegexAnswers): boolean {
  if (expected === null || typeof expected !== 'object') return same(actual, expected);
  for (const [op, operand] of Object.entries(expected as Record<string, unknown>)) {
    if (!applies(op, actual, operand, regex)) return false;
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

function applies(op: string, actual: unknown, operand: unknown, regex: RegexAnswers): boolean {
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
    case '$regex':
      return typeof actual === 'string' && regex.get(operand as string)?.get(actual) === true;
    default:
      return false;
  }
}
