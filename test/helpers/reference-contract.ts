import { readFileSync } from 'node:fs';
import type { RouteAccess } from '../../src/http/route-config.js';

/** One operation of the reference API, as test/fixtures/reference-api/operations.json writes it. */
export interface ReferenceOperation {
  method: string;
  /** Relative to /v1, with `{param}` segments, as the reference writes it. */
  path: string;
  tag: string;
  /** Path parameter → a name the test's setup created, or `=value`. */
  params?: Record<string, string>;
  query: string[];
  requestFields: string[];
  requiredFields?: string[];
  example?: { query?: Record<string, unknown>; body?: unknown };
  /** Who calls: the owner's admin key (default), a workspace key, or no key. */
  key?: 'workspace' | 'none';
  /** false: not called by the contract test (the note says why). */
  call?: boolean;
  note?: string;
  /** JSON Schema subset of the 2xx body; null when the reference answers without a body. */
  response: Record<string, unknown> | unknown[] | null;
}

export const operationId = (op: Pick<ReferenceOperation, 'method' | 'path'>) => `${op.method} ${op.path}`;

export function loadOperations(): ReferenceOperation[] {
  const url = new URL('../fixtures/reference-api/operations.json', import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { operations: ReferenceOperation[] }).operations;
}

/** What docs/compatibility.md says of an operation. */
export type DocStatus = 'served' | 'differs' | 'served elsewhere' | 'not yet';
export interface DocRow {
  status: DocStatus;
  /** The svcgw operations that serve it (`METHOD /v1/...`), from the "Served at" column. */
  servedAt: string[];
  notes: string;
  line: number;
}

const STATUSES: readonly DocStatus[] = ['served elsewhere', 'served', 'differs', 'not yet'];

/**
 * The operation table of docs/compatibility.md: rows `| \`METHOD /path\` | served at | status | notes |`.
 * The status cell begins with one of the statuses (in bold or not); anything after it is free text.
 */
export function parseCompatibility(text: string): { rows: Map<string, DocRow>; problems: string[] } {
  const rows = new Map<string, DocRow>();
  const problems: string[] = [];
  text.split('\n').forEach((line, index) => {
    const cells = line.split('|').map((cell) => cell.trim());
    if (cells.length < 6 || !/^`(GET|POST|PUT|DELETE) \/[^`]*`$/.test(cells[1]!)) return;
    const id = cells[1]!.slice(1, -1);
    const statusText = cells[3]!.replace(/\*/g, '').toLowerCase();
    const status = STATUSES.find((s) => statusText.startsWith(s));
    if (!status) {
      problems.push(`line ${index + 1}: ${id} has no known status (${STATUSES.join(', ')}): "${cells[3]}"`);
      return;
    }
    if (rows.has(id)) problems.push(`line ${index + 1}: ${id} is listed twice`);
    const servedAt = [...cells[2]!.matchAll(/`((?:GET|POST|PUT|DELETE) \/v1[^`]*)`/g)].map((m) => m[1]!);
    rows.set(id, { status, servedAt, notes: cells.slice(4, -1).join(' | '), line: index + 1 });
  });
  return { rows, problems };
}

const segments = (path: string) => path.split('/').filter(Boolean);
const isParam = (segment: string) => segment.startsWith(':') || /^\{.+\}$/.test(segment);

/**
 * Whether one of the server's routes is this operation: same method, and segment by segment the
 * same literal, or a parameter where the operation has one (names may differ). A path parameter
 * the fixture fixes (`=value`) is a literal the route may also take as a parameter, as the router
 * would. The gateway's catch-all is not a route of the control plane.
 */
export function servedBy(
  routes: readonly RouteAccess[],
  method: string,
  path: string,
  fixed: Readonly<Record<string, string>> = {},
): RouteAccess | undefined {
  const wanted = segments(path).map((segment) => {
    const name = /^\{(.+)\}$/.exec(segment)?.[1];
    const value = name === undefined ? undefined : fixed[name];
    if (value?.startsWith('=')) return { kind: 'fixed' as const, literal: value.slice(1) };
    return isParam(segment) ? { kind: 'param' as const, literal: '' } : { kind: 'literal' as const, literal: segment };
  });
  return routes.find((route) => {
    if (route.method !== method || route.url.includes('*')) return false;
    const have = segments(route.url);
    if (have.length !== wanted.length) return false;
    return have.every((segment, i) => {
      const w = wanted[i]!;
      if (w.kind === 'param') return isParam(segment);
      if (w.kind === 'fixed') return segment === w.literal || isParam(segment);
      return segment === w.literal;
    });
  });
}

/** `{{name}}` in strings of an example, replaced with what the setup created. */
export function fill(value: unknown, context: Readonly<Record<string, string>>): unknown {
  if (typeof value === 'string') {
    const whole = /^\{\{([\w:]+)\}\}$/.exec(value);
    if (whole) return context[whole[1]!] ?? value;
    return value.replace(/\{\{([\w:]+)\}\}/g, (match, name: string) => context[name] ?? match);
  }
  if (Array.isArray(value)) return value.map((item) => fill(item, context));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, context)]));
  return value;
}

/** The path the operation is called at: /v1 + its path, parameters filled (a random id when the setup made none). */
export function concretePath(op: ReferenceOperation, context: Readonly<Record<string, string>>): string {
  return `/v1${op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const source = op.params?.[name];
    const value = source?.startsWith('=') ? source.slice(1) : source ? context[source] : undefined;
    return encodeURIComponent(value ?? '00000000-0000-4000-8000-000000000000');
  })}`;
}

export function queryString(query: Record<string, unknown> | undefined): string {
  if (!query || Object.keys(query).length === 0) return '';
  const pairs = Object.entries(query).map(([k, v]): [string, string] => [
    k,
    typeof v === 'string' ? v : JSON.stringify(v),
  ]);
  return `?${new URLSearchParams(pairs).toString()}`;
}
