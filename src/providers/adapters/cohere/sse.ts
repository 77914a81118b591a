import { SseBlockSplitter } from '../shared/sse-blocks.js';

/** One server-sent event: its `event:` name (if any) and its `data:` lines joined. */
export interface SseEvent {
  event: string | null;
  data: string;
}

/** The event in one SSE block, or null when it has no `data:` line. */
function eventOf(block: string): SseEvent | null {
  let event: string | null = null;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
  }
  return data.length > 0 ? { event, data: data.join('\n') } : null;
}

const eventsOf = (blocks: string[]): SseEvent[] =>
  blocks.map(eventOf).filter((event): event is SseEvent => event !== null);

/**
 * Reads decoded text into complete SSE events (blank-line separated, any line ending, a CRLF
 * cut between chunks included); the incomplete rest waits for the next chunk, and `end` flushes
 * it as an event. Time is linear in the text, however it is chunked.
 */
export function createSseReader() {
  const splitter = new SseBlockSplitter();
  return {
    push: (text: string): SseEvent[] => eventsOf(splitter.push(text)),
    end: (text = ''): SseEvent[] => eventsOf(splitter.end(text)),
  };
}
