import { LogStore, type TextColumn } from './log-store.js';

/** Which rows a query reads: the caller's organisation, a time window (ms, inclusive) and filters. */
export interface RowFilter {
  organisationId: string;
  from: number;
  to: number;
  workspaceId?: string | undefined;
  apiKeyId?: string | undefined;
  /** The API keys the caller may see (data visibility); null: every key. */
  visibleKeyIds: ReadonlySet<string> | null;
  provider?: string | undefined;
  model?: string | undefined;
  statusCodes?: readonly number[] | undefined;
  metadata?: Readonly<Record<string, string>> | undefined;
}

/** Running totals of one group. Token averages count only rows that reported tokens. */
export interface Totals {
  requests: number;
  successes: number;
  /** HIT and SEMANTIC_HIT. */
  cacheHits: number;
  semanticHits: number;
  cost: number;
  totalTokens: number;
  tokenRows: number;
  promptTokens: number;
  promptRows: number;
  completionTokens: number;
  completionRows: number;
  latencySum: number;
  first: number;
  last: number;
  /** Every latency of the group in ascending order, when a percentile was asked for. */
  latencies: Float64Array | null;
}

export const newTotals = (withLatencies: boolean): Totals => ({
  requests: 0, successes: 0, cacheHits: 0, semanticHits: 0, cost: 0, totalTokens: 0, tokenRows: 0, promptTokens: 0, promptRows: 0,
  completionTokens: 0, completionRows: 0, latencySum: 0, first: Number.POSITIVE_INFINITY, last: Number.NEGATIVE_INFINITY,
  latencies: withLatencies ? new Float64Array(0) : null,
});

/** How rows are grouped: a number per row (a dictionary code, a status code, a time bucket). */
export type GroupOf = (store: LogStore, row: number) => number;

export const byText = (column: TextColumn): GroupOf => (store, row) => store.text[column][row]!;
export const byStatus: GroupOf = (store, row) => store.status[row]!;
export const allInOne: GroupOf = () => 0;

/**
 * One pass over the store: the rows that pass `filter`, totalled per group. Filters on text
 * columns compare dictionary codes, and the metadata filter is decided once per distinct
 * metadata value, so the loop touches only typed arrays.
 */
export function aggregate(store: LogStore, filter: RowFilter, groupOf: GroupOf, options: { latencies: boolean }): Map<number, Totals> {
  const slots: Totals[] = [];
  const slotOf = new Map<number, number>();
  const match = compile(store, filter);
  if (!match) return new Map();
  // Slot + 1 of each matched row (0: not matched); latencies are gathered per slot afterwards.
  const rowSlot = options.latencies ? new Int32Array(store.size) : null;
  const { time, latency, cost, flags, totalTokens, promptTokens, completionTokens } = store;
  for (let i = 0; i < store.size; i++) {
    if (!match(i)) continue;
    const key = groupOf(store, i);
    let slot = slotOf.get(key);
    if (slot === undefined) {
      slot = slots.push(newTotals(false)) - 1;
      slotOf.set(key, slot);
    }
    const t = slots[slot]!;
    if (rowSlot) rowSlot[i] = slot + 1;
    const f = flags[i]!;
    const at = time[i]!;
    t.requests++;
    t.successes += f & 1;
    t.cacheHits += (f >> 1) & 1;
    t.semanticHits += (f >> 2) & 1;
    const c = cost[i]!;
    if (c === c) t.cost += c;
    const tt = totalTokens[i]!;
    if (tt !== LogStore.NULL_INT) {
      t.totalTokens += tt;
      t.tokenRows++;
    }
    const pt = promptTokens[i]!;
    if (pt !== LogStore.NULL_INT) {
      t.promptTokens += pt;
      t.promptRows++;
    }
    const ct = completionTokens[i]!;
    if (ct !== LogStore.NULL_INT) {
      t.completionTokens += ct;
      t.completionRows++;
    }
    t.latencySum += latency[i]!;
    if (at < t.first) t.first = at;
    if (at > t.last) t.last = at;
  }
  if (rowSlot) gatherLatencies(store, rowSlot, slots);
  return new Map([...slotOf].map(([key, slot]) => [key, slots[slot]!]));
}

/**
 * Latencies of every slot into one array, slot after slot (a counting sort by slot), then each
 * slot's part sorted in place: typed-array sorts, no per-row allocation.
 */
function gatherLatencies(store: LogStore, rowSlot: Int32Array, slots: Totals[]): void {
  const starts = new Int32Array(slots.length + 1);
  slots.forEach((t, s) => (starts[s + 1] = starts[s]! + t.requests));
  const all = new Float64Array(starts[slots.length]!);
  const cursor = starts.slice(0, slots.length);
  for (let i = 0; i < rowSlot.length; i++) {
    const s = rowSlot[i]!;
    if (s !== 0) all[cursor[s - 1]!++] = store.latency[i]!;
  }
  slots.forEach((t, s) => (t.latencies = all.subarray(starts[s]!, starts[s + 1]!).sort()));
}

/** A row predicate for the filter, or null when no row can match (an unknown value). */
function compile(store: LogStore, filter: RowFilter): ((row: number) => boolean) | null {
  const d = store.dictionaries;
  const code = (column: TextColumn, value: string | undefined) => (value === undefined ? 0 : d[column].find(value));
  const org = code('organisation_id', filter.organisationId);
  const workspace = code('workspace_id', filter.workspaceId);
  const key = code('api_key_id', filter.apiKeyId);
  const provider = code('provider', filter.provider);
  const model = code('model', filter.model);
  if (org < 0 || workspace < 0 || key < 0 || provider < 0 || model < 0) return null;

  const visible = filter.visibleKeyIds === null ? null : codeSet(d.api_key_id.values.length, [...filter.visibleKeyIds].map((id) => d.api_key_id.find(id)));
  const metadata = filter.metadata ? metadataMatches(d.metadata.values, filter.metadata) : null;
  const statuses = filter.statusCodes && filter.statusCodes.length > 0 ? new Set(filter.statusCodes) : null;
  const { time, status, text } = store;
  const { from, to } = filter;
  return (i) => {
    const t = time[i]!;
    return (
      t >= from && t <= to &&
      text.organisation_id[i] === org &&
      (workspace === 0 || text.workspace_id[i] === workspace) &&
      (key === 0 || text.api_key_id[i] === key) &&
      (provider === 0 || text.provider[i] === provider) &&
      (model === 0 || text.model[i] === model) &&
      (visible === null || visible[text.api_key_id[i]!] === 1) &&
      (metadata === null || metadata[text.metadata[i]!] === 1) &&
      (statuses === null || statuses.has(status[i]!))
    );
  };
}

function codeSet(size: number, codes: number[]): Uint8Array {
  const set = new Uint8Array(size);
  for (const c of codes) if (c > 0) set[c] = 1;
  return set;
}

/** For each distinct metadata JSON: 1 when it holds every key of `wanted` with that exact value. */
function metadataMatches(values: readonly (string | null)[], wanted: Readonly<Record<string, string>>): Uint8Array {
  const result = new Uint8Array(values.length);
  const pairs = Object.entries(wanted);
  values.forEach((json, code) => {
    if (json === null) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      return;
    }
    if (parsed === null || typeof parsed !== 'object') return;
    const record = parsed as Record<string, unknown>;
    if (pairs.every(([k, v]) => Object.hasOwn(record, k) && record[k] === v)) result[code] = 1;
  });
  return result;
}

/** Nearest-rank percentile (the smallest value with at least p of the values at or below it). */
export function percentile(sorted: Float64Array, p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil(p * sorted.length));
  return sorted[rank - 1]!;
}

export const sortedLatencies = (t: Totals): Float64Array => t.latencies ?? new Float64Array(0);
