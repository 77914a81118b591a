/**
 * Cuts decoded server-sent-event text into blocks (the lines of one event, between blank lines)
 * as it arrives, whatever the chunk boundaries. Line ends (`\r\n`, `\r`, `\n`) become '\n'; a
 * '\r' that ends a chunk is held, since it may be the first half of a CRLF. Each chunk is scanned
 * once (plus the one '\n' a blank line can straddle) and an event's pieces are joined once, when
 * its blank line arrives, so a large event cut into many chunks costs time linear in its size.
 * The blocks are those of `text.replace(/\r\n?/g, '\n').split('\n\n')` over the whole stream.
 */
export class SseBlockSplitter {
  /** The text of the incomplete block, line ends already '\n'. */
  private pieces: string[] = [];
  /** Whether that text ends with '\n' (a '\n' at the start of the next chunk completes a blank line). */
  private pendingEndsWithLf = false;
  private heldCr = false;

  /** The blocks that `text` completes. */
  push(text: string): string[] {
    if (this.heldCr) text = `\r${text}`;
    this.heldCr = text.endsWith('\r');
    if (this.heldCr) text = text.slice(0, -1);
    return this.cut(text.replace(/\r\n?/g, '\n'));
  }

  /** The stream ended: the blocks `text` completes, then the last block (possibly ''). */
  end(text = ''): string[] {
    const blocks = this.push(text);
    if (this.heldCr) blocks.push(...this.cut('\n'));
    blocks.push(this.pieces.join(''));
    this.reset();
    return blocks;
  }

  /** The text not yet cut into a block, a held '\r' included. */
  get rest(): string {
    return this.pieces.join('') + (this.heldCr ? '\r' : '');
  }

  private reset(): void {
    this.pieces = [];
    this.pendingEndsWithLf = false;
    this.heldCr = false;
  }

  private cut(text: string): string[] {
    const blocks: string[] = [];
    let start = 0;
    if (this.pendingEndsWithLf && text.startsWith('\n')) {
      blocks.push(this.pieces.join('').slice(0, -1));
      this.pieces = [];
      start = 1;
    }
    for (let end = text.indexOf('\n\n', start); end !== -1; end = text.indexOf('\n\n', start)) {
      this.pieces.push(text.slice(start, end));
      blocks.push(this.pieces.join(''));
      this.pieces = [];
      start = end + 2;
    }
    if (start < text.length) {
      this.pieces.push(text.slice(start));
      this.pendingEndsWithLf = text.endsWith('\n');
    } else if (start > 0) {
      this.pendingEndsWithLf = false;
    }
    return blocks;
  }
}
