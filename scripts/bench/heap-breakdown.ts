import { request } from 'undici';

/**
 * Where the gateway's resident memory sits, MiB, from one scrape of its `GET /metrics`: the RSS
 * figure alone cannot tell garbage the next major collection frees from memory that stays.
 */
export interface HeapBreakdown {
  rss: number;
  /** V8's heap, committed (every space). */
  heapTotal: number;
  /** The old generation: committed, and what it holds, live or not yet collected. */
  oldSize: number;
  oldUsed: number;
  /** The young generation, committed. */
  newSize: number;
  code: number;
  largeObjects: number;
}

const MIB = 1024 * 1024;

/**
 * The breakdown from a Prometheus text exposition of svcgw's process metrics; null when one is
 * missing. Read by the exact lines svcgw renders (one `space` label): the parser the metrics tests
 * use (parse-prometheus-text-format) silently drops a last line without its newline.
 */
export function parseHeapBreakdown(text: string): HeapBreakdown | null {
  const lines = text.split('\n');
  const value = (name: string, space?: string): number | null => {
    const prefix = space === undefined ? `${name} ` : `${name}{space="${space}"} `;
    const line = lines.find((l) => l.startsWith(prefix));
    const number = line === undefined ? NaN : Number(line.slice(prefix.length));
    return Number.isFinite(number) ? number / MIB : null;
  };
  const figures = {
    rss: value('process_resident_memory_bytes'),
    heapTotal: value('nodejs_heap_size_total_bytes'),
    oldSize: value('nodejs_heap_space_size_total_bytes', 'old'),
    oldUsed: value('nodejs_heap_space_size_used_bytes', 'old'),
    newSize: value('nodejs_heap_space_size_total_bytes', 'new'),
    code: value('nodejs_heap_space_size_total_bytes', 'code'),
    largeObjects: value('nodejs_heap_space_size_total_bytes', 'large_object'),
  };
  return Object.values(figures).every((v) => v !== null) ? (figures as HeapBreakdown) : null;
}

/** Scrapes the gateway's metrics with the admin key; null when it cannot (metrics off, an error). */
export async function readHeapBreakdown(gatewayUrl: string, adminKey: string): Promise<HeapBreakdown | null> {
  try {
    const res = await request(`${gatewayUrl}/metrics`, { headers: { 'x-service-api-key': adminKey } });
    const text = await res.body.text();
    return res.statusCode === 200 ? parseHeapBreakdown(text) : null;
  } catch {
    return null;
  }
}

/** One line for the bench's report. */
export function heapBreakdownLine(when: string, b: HeapBreakdown): string {
  const mb = (n: number) => n.toFixed(1);
  return `gateway memory ${when}: RSS ${mb(b.rss)} MB = V8 heap ${mb(b.heapTotal)} MB (old generation ${mb(b.oldSize)} MB holding ${mb(b.oldUsed)} MB, live or not yet collected; young ${mb(b.newSize)}; code ${mb(b.code)}; large objects ${mb(b.largeObjects)}) + ${mb(b.rss - b.heapTotal)} MB outside it (the node binary's pages, native modules, SQLite, worker threads, malloc)`;
}
