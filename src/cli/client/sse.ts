/** One server-sent event: its `event:` name (`message` when none) and its data. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Reads a server-sent-event stream and yields each event with data; comment lines (heartbeats)
 * are skipped. Ends when the stream ends.
 */
export async function* readSseEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: RegExpExecArray | null;
    while ((end = /\r?\n\r?\n/.exec(buffer)) !== null) {
      const lines = buffer.slice(0, end.index).split(/\r?\n/);
      buffer = buffer.slice(end.index + end[0].length);
      const field = (name: string) =>
        lines
          .filter((line) => line.startsWith(`${name}:`))
          .map((line) => line.slice(line.charAt(name.length + 1) === ' ' ? name.length + 2 : name.length + 1));
      const data = field('data').join('\n');
      if (data.length > 0) yield { event: field('event')[0] ?? 'message', data };
    }
  }
}

/** The data of each event (see readSseEvents). */
export async function* readSseData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  for await (const event of readSseEvents(body)) yield event.data;
}
