import type { PartitionCursor, PartitionRow } from './cache-store.js';
import { bufferToSketch, popcount32, SKETCH_WORDS } from './vector-sketch.js';

/** One semantic partition in memory: the sketches of its entries in one flat typed array. */
class Partition {
  keys: string[] = [];
  readonly slotOf = new Map<string, number>();
  sketches = new Uint32Array(SKETCH_WORDS * 64);
  createdAt = new Float64Array(64);
  expiresAt = new Float64Array(64);

  get size(): number {
    return this.keys.length;
  }

  set(key: string, sketch: Uint32Array | Buffer, createdAt: number, expiresAt: number): void {
    let slot = this.slotOf.get(key);
    if (slot === undefined) {
      slot = this.keys.length;
      if (slot === this.createdAt.length) this.grow();
      this.keys.push(key);
      this.slotOf.set(key, slot);
    }
    if (Buffer.isBuffer(sketch)) bufferToSketch(sketch, this.sketches, slot * SKETCH_WORDS);
    else this.sketches.set(sketch, slot * SKETCH_WORDS);
    this.createdAt[slot] = createdAt;
    this.expiresAt[slot] = expiresAt;
  }

  /** Removes by moving the last entry into the hole: O(1), order does not matter. */
  remove(key: string): void {
    const slot = this.slotOf.get(key);
    if (slot === undefined) return;
    const last = this.keys.length - 1;
    if (slot !== last) {
      const lastKey = this.keys[last]!;
      this.keys[slot] = lastKey;
      this.slotOf.set(lastKey, slot);
      this.sketches.copyWithin(slot * SKETCH_WORDS, last * SKETCH_WORDS, (last + 1) * SKETCH_WORDS);
      this.createdAt[slot] = this.createdAt[last]!;
      this.expiresAt[slot] = this.expiresAt[last]!;
    }
    this.keys.pop();
    this.slotOf.delete(key);
  }

  private grow(): void {
    const capacity = this.createdAt.length * 2;
    const sketches = new Uint32Array(capacity * SKETCH_WORDS);
    sketches.set(this.sketches);
    this.sketches = sketches;
    const createdAt = new Float64Array(capacity);
    createdAt.set(this.createdAt);
    this.createdAt = createdAt;
    const expiresAt = new Float64Array(capacity);
    expiresAt.set(this.expiresAt);
    this.expiresAt = expiresAt;
  }
}

export interface Candidate {
  cacheKey: string;
  distance: number;
}

/** Where a partition's entries come from (cache-store.ts). */
export interface PartitionSource {
  page(
    partitionKey: string,
    after: PartitionCursor | null,
    limit: number,
  ): { rows: PartitionRow[]; next: PartitionCursor | null };
  pending(partitionKey: string): PartitionRow[];
}

/**
 * The in-memory side of semantic lookups: per partition, the 256-bit sketch of every live
 * entry. A lookup scans one partition's sketches (a few XOR and popcounts per entry, with an
 * early exit) and returns the few closest within the cut-off; only those are compared exactly.
 * Partitions load lazily from the store on first use, page by page so that a big one never
 * holds up other requests, and are evicted least recently used first once `maxEntries`
 * sketches are held in all.
 */
export function createSemanticIndex(deps: {
  source: PartitionSource;
  maxEntries: number;
  /** Rows per page while loading; the event loop runs between pages. */ pageSize: number;
}) {
  /** In least-recently-used-first order: a Map keeps insertion order, and use re-inserts. */
  const partitions = new Map<string, Partition>();
  const loading = new Map<string, Promise<Partition>>();
  let total = 0;

  function touch(partitionKey: string): Partition | undefined {
    const partition = partitions.get(partitionKey);
    if (partition) {
      partitions.delete(partitionKey);
      partitions.set(partitionKey, partition);
    }
    return partition;
  }

  /** Evicts whole partitions, oldest use first, until `needed` more sketches fit (never `keep`). */
  function makeRoom(needed: number, keep: string): void {
    for (const [key, partition] of partitions) {
      if (total + needed <= deps.maxEntries) return;
      if (key === keep) continue;
      partitions.delete(key);
      total -= partition.size;
    }
  }

  /** Adds rows to a partition within the global bound; false once it is full. */
  function fill(partitionKey: string, partition: Partition, rows: PartitionRow[]): boolean {
    if (partitions.get(partitionKey) !== partition) return false;
    for (const row of rows) {
      if (!partition.slotOf.has(row.cacheKey)) {
        makeRoom(1, partitionKey);
        if (total >= deps.maxEntries) return false;
        total++;
      }
      partition.set(row.cacheKey, row.sketch, row.createdAt, row.expiresAt);
    }
    return true;
  }

  /**
   * The partition, loading it first if needed. It is registered before the first page is read,
   * so entries stored meanwhile land in it too.
   */
  function ensureLoaded(partitionKey: string): Partition | Promise<Partition> {
    const existing = loading.has(partitionKey) ? undefined : touch(partitionKey);
    if (existing) return existing;
    let promise = loading.get(partitionKey);
    if (!promise) {
      const partition = new Partition();
      partitions.set(partitionKey, partition);
      promise = (async () => {
        try {
          let after: PartitionCursor | null = null;
          do {
            const page = deps.source.page(partitionKey, after, deps.pageSize);
            if (!fill(partitionKey, partition, page.rows)) break;
            after = page.next;
            if (after) await new Promise((resolve) => setImmediate(resolve));
          } while (after && partitions.get(partitionKey) === partition);
          fill(partitionKey, partition, deps.source.pending(partitionKey));
          return partition;
        } catch (error) {
          // Not half-loaded: the next lookup starts again.
          if (partitions.get(partitionKey) === partition) {
            partitions.delete(partitionKey);
            total -= partition.size;
          }
          throw error;
        } finally {
          loading.delete(partitionKey);
        }
      })();
      loading.set(partitionKey, promise);
    }
    return promise;
  }

  /** Sketch distance scan of one partition; see `candidates`. */
  function scan(
    partition: Partition,
    sketch: Uint32Array,
    options: { cutoff: number; now: number; notBefore: number; limit: number },
  ): Candidate[] {
    const { sketches, createdAt, expiresAt, keys } = partition;
    const { cutoff, now, notBefore } = options;
    const q0 = sketch[0]!,
      q1 = sketch[1]!,
      q2 = sketch[2]!,
      q3 = sketch[3]!;
    const q4 = sketch[4]!,
      q5 = sketch[5]!,
      q6 = sketch[6]!,
      q7 = sketch[7]!;
    const found: Candidate[] = [];
    for (let slot = 0, base = 0; slot < keys.length; slot++, base += SKETCH_WORDS) {
      let d =
        popcount32(sketches[base]! ^ q0) +
        popcount32(sketches[base + 1]! ^ q1) +
        popcount32(sketches[base + 2]! ^ q2) +
        popcount32(sketches[base + 3]! ^ q3);
      if (d > cutoff) continue;
      d +=
        popcount32(sketches[base + 4]! ^ q4) +
        popcount32(sketches[base + 5]! ^ q5) +
        popcount32(sketches[base + 6]! ^ q6) +
        popcount32(sketches[base + 7]! ^ q7);
      if (d > cutoff || expiresAt[slot]! <= now || createdAt[slot]! < notBefore) continue;
      found.push({ cacheKey: keys[slot]!, distance: d });
    }
    found.sort((a, b) => a.distance - b.distance);
    return found.length > options.limit ? found.slice(0, options.limit) : found;
  }

  return {
    /**
     * Entries of the partition whose sketch is within `cutoff` bits of `sketch`, alive at `now`
     * and created at or after `notBefore`, closest first, at most `limit`.
     */
    async candidates(
      partitionKey: string,
      sketch: Uint32Array,
      options: { cutoff: number; now: number; notBefore: number; limit: number },
    ): Promise<Candidate[]> {
      const partition = await ensureLoaded(partitionKey);
      return scan(partition, sketch, options);
    },

    /** Adds or replaces an entry in its partition, if that partition is in memory (else it loads with it later). */
    add(partitionKey: string, cacheKey: string, sketch: Uint32Array, createdAt: number, expiresAt: number): void {
      const partition = partitions.get(partitionKey);
      if (partition) fill(partitionKey, partition, [{ cacheKey, sketch, createdAt, expiresAt }]);
    },

    /** Forgets an entry (its row is gone). */
    remove(partitionKey: string, cacheKey: string): void {
      const partition = partitions.get(partitionKey);
      if (partition?.slotOf.has(cacheKey)) {
        partition.remove(cacheKey);
        total--;
      }
    },

    /** Drops entries expired at `now` from every partition in memory. */
    dropExpired(now: number): void {
      for (const partition of partitions.values()) {
        for (let slot = partition.size - 1; slot >= 0; slot--) {
          if (partition.expiresAt[slot]! <= now) {
            partition.remove(partition.keys[slot]!);
            total--;
          }
        }
      }
    },

    clear(): void {
      partitions.clear();
      total = 0;
    },

    get size(): number {
      return total;
    },
    get partitionCount(): number {
      return partitions.size;
    },
  };
}

export type SemanticIndex = ReturnType<typeof createSemanticIndex>;
