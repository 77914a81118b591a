/**
 * Reads a server-sent-event stream and yields the data of each event; comment lines
 * (heartbeats) are skipped. Ends when the stream ends.
 */
export async function* readSseData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: RegExpExecArray | null;
    while ((end = /\r?\n\r?\n/.exec(buffer)) !== null) {
      const event = buffer.slice(0, end.index);
      buffer = buffer.slice(end.index + end[0].length);
      const data = event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(line.charAt(5) === ' ' ? 6 : 5))
        .join('\n');
      if (data.length > 0) yield data;
    }
  }
}
