/** One server-sent event: its `event:` name (if any) and its `data:` lines joined. */
export interface SseEvent {
  event: string | null;
  data: string;
}

/**
 * Splits text into complete SSE events (blank-line separated, any line ending) and the
 * incomplete rest, which waits for the next chunk. `final` flushes the rest as an event.
 */
export function takeSseEvents(buffer: string, final = false): { events: SseEvent[]; rest: string } {
  const blocks = buffer.replace(/\r\n?/g, '\n').split('\n\n');
  const rest = final ? '' : (blocks.pop() ?? '');
  const events: SseEvent[] = [];
  for (const block of blocks) {
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    }
    if (data.length > 0) events.push({ event, data: data.join('\n') });
  }
  return { events, rest };
}
