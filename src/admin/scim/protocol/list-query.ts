import type { JsonObject } from './attributes.js';
import { eqConditions, parseFilter } from './filters.js';
import { scimInvalid } from './scim-errors.js';
import { URN } from './schema-urns.js';

/** The most resources one page holds (ServiceProviderConfig `filter.maxResults`). */
export const MAX_RESULTS = 1000;
const DEFAULT_COUNT = 100;

/** Which attributes an answer shows (`attributes`, `excludedAttributes`; top-level names). */
export interface Projection {
  only: ReadonlySet<string> | null;
  excluded: ReadonlySet<string>;
}

export interface ListQuery<Attr extends string> {
  conditions: Array<{ attr: Attr; value: string | boolean | number | null }>;
  /** 1-based, as SCIM counts. */
  startIndex: number;
  count: number;
  projection: Projection;
}

type RawQuery = Record<string, unknown>;

function single(query: RawQuery, name: string): string | undefined {
  const key = Object.keys(query).find((k) => k.toLowerCase() === name.toLowerCase());
  if (key === undefined) return undefined;
  const value = query[key];
  if (typeof value !== 'string')
    throw scimInvalid('invalidValue', `The query parameter ${name} is given more than once.`);
  return value;
}

function integer(query: RawQuery, name: string): number | undefined {
  const value = single(query, name);
  if (value === undefined || value === '') return undefined;
  if (!/^-?\d{1,15}$/.test(value.trim())) throw scimInvalid('invalidValue', `${name} must be an integer.`);
  return Number(value.trim());
}

/** `urn:…:User:name.givenName` → `name`: answers are cut at the top level. */
function topLevel(attribute: string): string {
  const lowered = attribute.trim().toLowerCase();
  for (const urn of [URN.user, URN.group]) {
    if (lowered.startsWith(`${urn.toLowerCase()}:`)) return topLevel(attribute.trim().slice(urn.length + 1));
  }
  if (lowered.startsWith('urn:')) return attribute.trim();
  return lowered.split('.')[0]!;
}

const names = (value: string | undefined): ReadonlySet<string> | null =>
  value === undefined || value.trim() === ''
    ? null
    : new Set(value.split(',').map((name) => topLevel(name).toLowerCase()));

export function projectionOf(query: RawQuery): Projection {
  return {
    only: names(single(query, 'attributes')),
    excluded: names(single(query, 'excludedAttributes')) ?? new Set(),
  };
}

/** Reads the query of a list request; filters are limited to `eq` on the attributes `supported` names. */
export function listQueryOf<Attr extends string>(
  query: RawQuery,
  supported: Readonly<Record<string, Attr>>,
): ListQuery<Attr> {
  const filter = single(query, 'filter');
  const startIndex = integer(query, 'startIndex') ?? 1;
  const count = integer(query, 'count') ?? DEFAULT_COUNT;
  return {
    conditions: filter === undefined || filter.trim() === '' ? [] : eqConditions(parseFilter(filter), supported),
    // RFC 7644 §3.4.2.4: a startIndex below 1 counts as 1, a negative count as 0.
    startIndex: Math.max(1, startIndex),
    count: Math.min(MAX_RESULTS, Math.max(0, count)),
    projection: projectionOf(query),
  };
}

/** Whether the projection shows the attribute (to skip loading what is not shown, such as members). */
export const shows = (projection: Projection, attribute: string): boolean =>
  !projection.excluded.has(attribute.toLowerCase()) &&
  (projection.only === null || projection.only.has(attribute.toLowerCase()));

/** The resource cut to the projection; `schemas`, `id` and `meta` are always returned. */
export function project(resource: JsonObject, projection: Projection): JsonObject {
  const always = new Set(['schemas', 'id', 'meta']);
  return Object.fromEntries(Object.entries(resource).filter(([key]) => always.has(key) || shows(projection, key)));
}

export const listResponse = (resources: JsonObject[], total: number, startIndex: number) => ({
  schemas: [URN.listResponse],
  totalResults: total,
  startIndex,
  itemsPerPage: resources.length,
  Resources: resources,
});
