import { parse, type Filter } from 'scim2-parse-filter';
import { asBoolean, isPlainObject, read, type JsonObject } from './attributes.js';
import { scimInvalid, type ScimType } from './scim-errors.js';

export type { Filter } from 'scim2-parse-filter';

/** Longer filters are refused before parsing: no provider sends one, and the parser recurses. */
const MAX_FILTER_LENGTH = 2000;

/** Parses a SCIM filter; a malformed one is a 400 with the given scimType (invalidFilter, or invalidPath in a PATCH path). */
export function parseFilter(text: string, scimType: ScimType = 'invalidFilter'): Filter {
  if (text.length > MAX_FILTER_LENGTH)
    throw scimInvalid(scimType, `The filter is longer than ${MAX_FILTER_LENGTH} characters.`);
  try {
    return parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw scimInvalid(scimType, `The filter ${JSON.stringify(text.slice(0, 200))} cannot be parsed (${detail}).`);
  }
}

const equalText = (left: unknown, right: unknown): boolean =>
  typeof left === 'string' && typeof right === 'string'
    ? left.toLowerCase() === right.toLowerCase()
    : typeof right === 'boolean'
      ? asBoolean(left) === right
      : left === right;

function compare(value: unknown, op: string, operand: unknown): boolean {
  if (Array.isArray(value)) return value.some((item) => compare(item, op, operand));
  const text = typeof value === 'string' ? value.toLowerCase() : null;
  const wanted = typeof operand === 'string' ? operand.toLowerCase() : null;
  switch (op) {
    case 'eq':
      return equalText(value, operand);
    case 'ne':
      return !equalText(value, operand);
    case 'co':
      return text !== null && wanted !== null && text.includes(wanted);
    case 'sw':
      return text !== null && wanted !== null && text.startsWith(wanted);
    case 'ew':
      return text !== null && wanted !== null && text.endsWith(wanted);
    case 'gt':
    case 'ge':
    case 'lt':
    case 'le': {
      if (typeof value !== typeof operand || (typeof value !== 'string' && typeof value !== 'number')) return false;
      const order = value < (operand as typeof value) ? -1 : value > (operand as typeof value) ? 1 : 0;
      return op === 'gt' ? order > 0 : op === 'ge' ? order >= 0 : op === 'lt' ? order < 0 : order <= 0;
    }
    default:
      return false;
  }
}

/** The value at a dotted attribute path of an element (`value`, `name.givenName`). */
function valueAt(element: JsonObject, attrPath: string): unknown {
  let current: unknown = element;
  for (const part of attrPath.split('.')) {
    if (Array.isArray(current)) current = current.map((item) => (isPlainObject(item) ? read(item, part) : undefined));
    else if (isPlainObject(current)) current = read(current, part);
    else return undefined;
  }
  return current;
}

/**
 * Whether a value of a multi-valued attribute matches a PATCH path's filter
 * (`emails[type eq "work"]`): attribute names and strings compare without regard to case.
 */
export function matchesFilter(filter: Filter, element: unknown): boolean {
  if (!isPlainObject(element)) return false;
  switch (filter.op) {
    case 'and':
      return filter.filters.every((inner) => matchesFilter(inner, element));
    case 'or':
      return filter.filters.some((inner) => matchesFilter(inner, element));
    case 'not':
      return !matchesFilter(filter.filter, element);
    case 'pr': {
      const value = valueAt(element, filter.attrPath);
      return value !== undefined && value !== null && value !== '';
    }
    case '[]': {
      const inner = valueAt(element, filter.attrPath);
      return Array.isArray(inner) && inner.some((item) => matchesFilter(filter.valFilter, item));
    }
    default:
      return compare(valueAt(element, filter.attrPath), filter.op, filter.compValue);
  }
}

/**
 * The element a filter of equalities describes (`type eq "work"` → `{type: "work"}`), so that
 * `add` or `replace` on `emails[type eq "work"].value` creates the e-mail when there is none, as
 * Microsoft Entra ID expects. Null when the filter is not made of `eq` joined by `and`.
 */
export function elementOf(filter: Filter): JsonObject | null {
  if (filter.op === 'eq' && !filter.attrPath.includes('.')) return { [filter.attrPath]: filter.compValue };
  if (filter.op !== 'and') return null;
  const element: JsonObject = {};
  for (const inner of filter.filters) {
    const part = elementOf(inner);
    if (!part) return null;
    Object.assign(element, part);
  }
  return element;
}

/**
 * A list filter as `eq` conditions joined by `and`, on the attributes `supported` names
 * (lower-cased attribute path → what to call it); anything else is refused with a message that
 * says what is supported. `members[value eq "…"]` reads as `members.value eq "…"`.
 */
export function eqConditions<Attr extends string>(
  filter: Filter,
  supported: Readonly<Record<string, Attr>>,
): Array<{ attr: Attr; value: string | boolean | number | null }> {
  const refuse = () =>
    scimInvalid(
      'invalidFilter',
      `Only "eq" on ${Object.keys(supported)
        .map((name) => SPELLING[name] ?? name)
        .join(', ')} (joined by "and") is supported in filters.`,
    );
  if (filter.op === 'and') return filter.filters.flatMap((inner) => eqConditions(inner, supported));
  if (filter.op === '[]') {
    const inner = filter.valFilter;
    if (inner.op !== 'eq' || inner.attrPath.includes('.')) throw refuse();
    return eqConditions({ ...inner, attrPath: `${filter.attrPath}.${inner.attrPath}` }, supported);
  }
  if (filter.op !== 'eq') throw refuse();
  const attr = supported[filter.attrPath.toLowerCase()];
  if (!attr) throw refuse();
  return [{ attr, value: filter.compValue }];
}

const SPELLING: Record<string, string> = {
  username: 'userName',
  externalid: 'externalId',
  displayname: 'displayName',
  'emails.value': 'emails.value',
  'members.value': 'members.value',
};
