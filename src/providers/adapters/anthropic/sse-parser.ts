import { StringDecoder } from 'node:string_decoder';

export interface SseEvent {
  /** The `event:` field; empty when the event had none. */
  event: string;
  /** The `data:` lines joined with '\n'. */
  data: string;
}

/**
 * Splits a server-sent-event byte stream into events, whatever the chunk boundaries: partial
 * events, multi-byte characters and CRLF pairs cut between chunks are held until complete.
 */
export function createSseParser() {
  const decoder = new StringDecoder('utf8');
  let buffer = '';
  let heldCr = false;

  const take = (): SseEvent[] => {
    const events: SseEvent[] = [];
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const event = parseEvent(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (event) events.push(event);
    }
    return events;
  };

  return {
    push(chunk: Buffer): SseEvent[] {
      let text = (heldCr ? '\r' : '') + decoder.write(chunk);
      heldCr = text.endsWith('\r');
      if (heldCr) text = text.slice(0, -1);
      buffer += text.replace(/\r\n?/g, '\n');
      return take();
    },
    /** The stream ended: a last event without its blank line still counts. */
    end(): SseEvent[] {
      buffer += (heldCr ? '\n' : '') + decoder.end().replace(/\r\n?/g, '\n');
      heldCr = false;
      const events = take();
      const last = buffer.trim() === '' ? null : parseEvent(buffer);
      buffer = '';
      return last ? [...events, last] : events;
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
