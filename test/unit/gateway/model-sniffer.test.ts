import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sniffModel, type BodyKind } from '../../../src/gateway/model-sniffer.js';

/** Streams `body` through the sniffer in the given chunk sizes; the model it reported and the bytes that came out. */
async function sniff(kind: BodyKind, body: Buffer, cuts: number[]): Promise<{ model: string | null; out: Buffer }> {
  const chunks: Buffer[] = [];
  let at = 0;
  for (const cut of cuts) {
    if (at >= body.length) break;
    chunks.push(body.subarray(at, at + cut));
    at += cut;
  }
  if (at < body.length) chunks.push(body.subarray(at));
  let model: string | null = null;
  const sniffer = Readable.from(chunks).pipe(sniffModel(kind, (value) => (model ??= value)));
  const out: Buffer[] = [];
  for await (const chunk of sniffer) out.push(chunk as Buffer);
  return { model, out: Buffer.concat(out) };
}

function multipart(parts: Array<[string, string | Buffer, string?]>): Buffer {
  const boundary = '----svcgwBoundary7MA4YWxkTrZu0gW';
  const pieces: Buffer[] = [];
  for (const [name, value, filename] of parts) {
    const disposition = `Content-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"\r\nContent-Type: audio/mpeg` : ''}`;
    pieces.push(
      Buffer.from(`--${boundary}\r\n${disposition}\r\n\r\n`),
      Buffer.isBuffer(value) ? value : Buffer.from(value),
      Buffer.from('\r\n'),
    );
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(pieces);
}

describe('model sniffer', () => {
  it('reads the model field of a multipart body wherever chunks are cut, and passes the bytes unchanged', async () => {
    const audio = Buffer.alloc(3000, 0x41);
    const body = multipart([
      ['file', audio, 'a.mp3'],
      ['model', 'gpt-4o-transcribe'],
      ['language', 'en'],
    ]);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 700 }), { maxLength: 40 }), async (cuts) => {
        const { model, out } = await sniff('multipart', body, cuts);
        expect(model).toBe('gpt-4o-transcribe');
        expect(out.equals(body)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('reads the top-level model of a JSON body and skips a "model" that holds no string', async () => {
    const body = Buffer.from(
      JSON.stringify({ metadata: { model: { nested: true } }, max_tokens: 5, model: 'claude-\\"x', messages: [] }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 20 }), { maxLength: 20 }), async (cuts) => {
        expect((await sniff('json', body, cuts)).model).toBe('claude-\\"x');
      }),
      { numRuns: 100 },
    );
  });

  it('reads a body crowded with markers that are not the field the same wherever chunks are cut', async () => {
    // Pieces that look like the field and are not, then the field itself.
    const decoys = ['"model"', '"model":', '"model": 1,', '"model":{},', ' ', 'x', '\\"', '"mod'];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...decoys), { maxLength: 300 }),
        fc.array(fc.integer({ min: 1, max: 90 }), { maxLength: 60 }),
        async (pieces, cuts) => {
          const body = Buffer.from(`{${pieces.join('')}"model": "gpt-5.1"}`);
          const whole = await sniff('json', body, []);
          const cut = await sniff('json', body, cuts);
          expect(cut.model).toBe(whole.model);
          expect(cut.out.equals(body)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
    const crowded = Buffer.from(`{${'"model"'.repeat(50_000)}"model": "gpt-5.1"}`);
    expect((await sniff('json', crowded, Array(400).fill(997))).model).toBe('gpt-5.1');
  });

  it('reads a multipart model field that ends the body, after header lines that name it too', async () => {
    const body = Buffer.from(`${'name="model"\r\n'.repeat(3000)}name="model"\r\n\r\ngpt-4o-transcribe\r\n`);
    expect((await sniff('multipart', body, Array(100).fill(1000))).model).toBe('gpt-4o-transcribe');
  });

  it('reports nothing when there is no model field', async () => {
    expect((await sniff('multipart', multipart([['file', Buffer.alloc(100, 1), 'a.mp3']]), [10, 10])).model).toBeNull();
  });
});
