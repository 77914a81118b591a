import { StringDecoder } from 'node:string_decoder';
import { SseBlockSplitter } from '../shared/sse-blocks.js';

export interface SseEvent {
  /** The `event:` field; empty when the event had none. */
  event: string;
  /** The `data:` lines joined with '\n'. */
  data: string;
}

/**
 * Splits a server-sent-event byte stream into events, whatever the chunk boundaries: partial
 * events, multi-byte characters and CRLF pairs cut between chunks are held until complete. Each
 * byte is scanned once, so a large event cut into many chunks costs time linear in its size.
 */
export function createSseParser() {
  const decoder = new StringDecoder('utf8');
  const splitter = new SseBlockSplitter();
  const eventsOf = (blocks: string[]): SseEvent[] =>
    blocks.map(parseEvent).filter((event): event is SseEvent => event !== null);

  return {
    push(chunk: Buffer): SseEvent[] {
      return eventsOf(splitter.push(decoder.write(chunk)));
    },
    /** The stream ended: a last event without its blank line still counts. */
    end(): SseEvent[] {
      return eventsOf(splitter.end(decoder.end()));
    },
  };
}

function parseEvent(block: string): SseEvent | null {
  let event = '';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  return event === '' && data.length === 0 ? null : { event, data: data.join('\n') };
}
