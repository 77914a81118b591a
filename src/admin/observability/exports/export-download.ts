import { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { csvLine, type ExportField } from './export-fields.js';

/**
 * The export's JSONL as CSV, converted line by line as the client reads it (never whole in
 * memory): a header of the requested fields, then one row per record; objects (bodies,
 * metadata) are JSON text in their cell.
 */
export function csvStream(jsonl: Readable, fields: readonly ExportField[]): Readable {
  async function* rows(): AsyncGenerator<string> {
    yield csvLine(fields);
    const lines = createInterface({ input: jsonl, crlfDelay: Infinity });
    for await (const line of lines) {
      if (line.length === 0) continue;
      const record = JSON.parse(line) as Record<string, unknown>;
      yield csvLine(fields.map((field) => record[field]));
    }
  }
  return Readable.from(rows());
}
