import { z } from 'zod';
import { canonicalise, isMultiValued, isPlainObject, keyFor, read, textOf, type JsonObject } from './attributes.js';
import { elementOf, matchesFilter } from './filters.js';
import { parsePath, type ScimPath } from './paths.js';
import { scimInvalid } from './scim-errors.js';

export type PatchVerb = 'add' | 'replace' | 'remove';

export interface PatchOperation {
  op: PatchVerb;
  path: string | null;
  value: unknown;
}

const MAX_OPERATIONS = 1000;

const operation = z
  .object({
    // Microsoft Entra ID capitalises the verbs ("Replace"); RFC 7644 spells them in lower case.
    op: z.string().transform((op) => op.toLowerCase()),
    path: z.string().optional(),
    value: z.unknown().optional(),
  })
  .loose();

/**
 * The operations of a PATCH body (`Operations`, any case), validated; a body that is not a
 * PatchOp is a 400 invalidSyntax.
 */
export function patchOperations(body: unknown): PatchOperation[] {
  if (!isPlainObject(body)) throw scimInvalid('invalidSyntax', 'The body must be a PatchOp object.');
  const list = read(body, 'Operations');
  if (!Array.isArray(list) || list.length === 0)
    throw scimInvalid('invalidSyntax', 'The body needs "Operations": a non-empty array of operations.');
  if (list.length > MAX_OPERATIONS)
    throw scimInvalid('tooMany', `A PATCH may carry at most ${MAX_OPERATIONS} operations.`);
  return list.map((raw, index) => {
    const parsed = operation.safeParse(isPlainObject(raw) ? lowerKeys(raw) : raw);
    if (!parsed.success) throw scimInvalid('invalidSyntax', `Operations[${index}] must be an object with "op".`);
    const { op, path, value } = parsed.data;
    if (op !== 'add' && op !== 'replace' && op !== 'remove')
      throw scimInvalid('invalidSyntax', `Operations[${index}].op must be add, replace or remove.`);
    if (op !== 'remove' && value === undefined)
      throw scimInvalid('invalidValue', `Operations[${index}] (${op}) needs a value.`);
    return { op, path: path ?? null, value: canonicalise(value) };
  });
}

const lowerKeys = (object: JsonObject): JsonObject =>
  Object.fromEntries(Object.entries(object).map(([key, value]) => [key.toLowerCase(), value]));

/**
 * Applies operations to a resource (a plain JSON object, changed in place), following RFC 7644
 * §3.5.2 where providers follow it and the way Okta and Microsoft Entra ID send them where they
 * differ: no path with a value object whose keys are paths themselves (`"name.givenName"`),
 * `remove` of `members` with a value list, `add` through a filter that matches nothing
 * (`emails[type eq "work"].value`) creating the element.
 */
export function applyPatch(resource: JsonObject, operations: readonly PatchOperation[]): void {
  for (const operation of operations) applyOne(resource, operation);
}

function applyOne(resource: JsonObject, { op, path, value }: PatchOperation): void {
  if (path === null) {
    if (op === 'remove') throw scimInvalid('noTarget', 'A remove operation needs a path.');
    if (!isPlainObject(value)) throw scimInvalid('invalidValue', `An ${op} without a path needs an object value.`);
    for (const [key, inner] of Object.entries(value)) applyAt(resource, parsePath(key), op, inner);
    return;
  }
  applyAt(resource, parsePath(path), op, value);
}

function applyAt(resource: JsonObject, path: ScimPath, op: PatchVerb, value: unknown): void {
  let container = resource;
  if (path.extension !== null) {
    const key = keyFor(resource, path.extension);
    if (path.attr === null) {
      if (op === 'remove') delete resource[key];
      else if (!isPlainObject(value)) throw scimInvalid('invalidValue', `${path.extension} takes an object.`);
      else resource[key] = { ...(isPlainObject(resource[key]) ? resource[key] : {}), ...value };
      return;
    }
    if (!isPlainObject(resource[key])) {
      if (op === 'remove') return;
      resource[key] = {};
    }
    container = resource[key] as JsonObject;
  }
  const attr = path.attr!;
  const key = keyFor(container, attr);
  if (path.filter === null && path.sub === null) return setAttribute(container, key, op, value);
  if (path.filter === null) return setSubAttribute(container, key, path.sub!, op, value);
  return setFiltered(container, key, path, op, value);
}

/** `attr`: multi-valued ones take appends (add) and removals of listed values; complex ones merge. */
function setAttribute(container: JsonObject, key: string, op: PatchVerb, value: unknown): void {
  const current = container[key];
  if (op === 'remove') {
    if (value !== undefined && Array.isArray(current)) {
      const gone = new Set((Array.isArray(value) ? value : [value]).map(identity));
      container[key] = current.filter((item) => !gone.has(identity(item)));
    } else delete container[key];
    return;
  }
  if (op === 'add' && (Array.isArray(current) || isMultiValued(key))) {
    const list = Array.isArray(current) ? [...(current as unknown[])] : [];
    // Where the first value of each identity is; merging a value into it keeps its identity.
    const at = new Map<string, number>();
    list.forEach((existing, index) => {
      const id = identity(existing);
      if (!at.has(id)) at.set(id, index);
    });
    for (const item of Array.isArray(value) ? value : [value]) {
      const id = identity(item);
      const index = at.get(id);
      if (index === undefined) at.set(id, list.push(item) - 1);
      else list[index] = isPlainObject(list[index]) && isPlainObject(item) ? { ...list[index], ...item } : item;
    }
    container[key] = list;
    return;
  }
  container[key] = isPlainObject(current) && isPlainObject(value) ? { ...current, ...value } : value;
}

/** `attr.sub`: on a complex attribute, that sub-attribute; on a multi-valued one, it in every value. */
function setSubAttribute(container: JsonObject, key: string, sub: string, op: PatchVerb, value: unknown): void {
  const current = container[key];
  if (Array.isArray(current)) {
    if (current.length === 0 && op !== 'remove') {
      container[key] = [{ [sub]: value }];
      return;
    }
    for (const item of current) if (isPlainObject(item)) setAttribute(item, keyFor(item, sub), op, value);
    return;
  }
  if (!isPlainObject(current)) {
    if (op === 'remove') return;
    container[key] = isMultiValued(key) ? [{ [sub]: value }] : { [sub]: value };
    return;
  }
  setAttribute(current, keyFor(current, sub), op === 'add' ? 'replace' : op, value);
}

/** `attr[filter]` and `attr[filter].sub`: the values the filter matches. */
function setFiltered(container: JsonObject, key: string, path: ScimPath, op: PatchVerb, value: unknown): void {
  const current = Array.isArray(container[key]) ? (container[key] as unknown[]) : [];
  const matched = current.filter((item) => matchesFilter(path.filter!, item));
  if (op === 'remove') {
    if (path.sub === null) {
      const gone = new Set(matched);
      container[key] = current.filter((item) => !gone.has(item));
    } else for (const item of matched) delete (item as JsonObject)[keyFor(item as JsonObject, path.sub)];
    return;
  }
  if (matched.length === 0) {
    const seed = elementOf(path.filter!);
    if (!seed) throw scimInvalid('noTarget', `No value of ${key} matches the path's filter.`);
    const created = canonicalise(seed) as JsonObject;
    current.push(created);
    matched.push(created);
    container[key] = current;
  }
  for (const item of matched as JsonObject[]) {
    if (path.sub !== null) item[keyFor(item, path.sub)] = value;
    else if (isPlainObject(value)) {
      if (op === 'replace') for (const name of Object.keys(item)) delete item[name];
      Object.assign(item, value);
    } else throw scimInvalid('invalidValue', `A value of ${key} is an object.`);
  }
}

/** What identifies a value of a multi-valued attribute: its `value` (case-insensitive), else the value itself. */
function identity(item: unknown): string {
  if (isPlainObject(item)) {
    const inner = read(item, 'value');
    if (inner !== undefined) return `v:${textOf(inner).toLowerCase()}`;
    return `o:${JSON.stringify(item)}`;
  }
  return `p:${typeof item === 'string' ? item.toLowerCase() : JSON.stringify(item)}`;
}
