import { describe, expect, it } from 'vitest';
import { requestTextSlots, responseTextSlots } from '../../../src/guardrails/text/extract.js';
import { withTexts } from '../../../src/guardrails/text/write.js';

const texts = (slots: { text: string }[]) => slots.map((s) => s.text);

describe('text slots', () => {
  it('reads chat messages with string and part contents', () => {
    const body = {
      messages: [
        { role: 'system', content: 'sys' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'image_url', image_url: { url: 'x' } },
            { type: 'text', text: 'b' },
          ],
        },
      ],
    };
    const slots = requestTextSlots('chatComplete', body);
    expect(texts(slots)).toEqual(['sys', 'a', 'b']);
    expect(slots[2]).toMatchObject({ path: ['messages', 1, 'content', 2, 'text'], role: 'user', group: 1 });
  });

  it('reads completions, embeddings, Responses and Anthropic requests', () => {
    expect(texts(requestTextSlots('complete', { prompt: ['p1', 'p2'] }))).toEqual(['p1', 'p2']);
    expect(texts(requestTextSlots('embed', { input: 'e' }))).toEqual(['e']);
    expect(texts(requestTextSlots('embed', { input: [1, 2, 3] }))).toEqual([]);
    expect(
      texts(
        requestTextSlots('createModelResponse', {
          instructions: 'i',
          input: [{ role: 'user', content: [{ type: 'input_text', text: 'q' }] }],
        }),
      ),
    ).toEqual(['i', 'q']);
    expect(
      texts(
        requestTextSlots('messages', {
          system: [{ type: 'text', text: 's' }],
          messages: [{ role: 'user', content: 'u' }],
        }),
      ),
    ).toEqual(['s', 'u']);
  });

  it('reads answers of every shape', () => {
    expect(
      texts(
        responseTextSlots('chatComplete', {
          choices: [{ message: { content: 'c0' } }, { message: { content: 'c1' } }],
        }),
      ),
    ).toEqual(['c0', 'c1']);
    expect(texts(responseTextSlots('complete', { choices: [{ text: 't' }] }))).toEqual(['t']);
    expect(
      texts(
        responseTextSlots('messages', {
          content: [
            { type: 'text', text: 'm' },
            { type: 'tool_use', id: 'x' },
          ],
        }),
      ),
    ).toEqual(['m']);
    expect(
      texts(
        responseTextSlots('createModelResponse', {
          output: [{ type: 'reasoning' }, { type: 'message', content: [{ type: 'output_text', text: 'o' }] }],
        }),
      ),
    ).toEqual(['o']);
  });

  it('writes texts back into a copy, in the same shape', () => {
    const body = { messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }] }] };
    const [slot] = requestTextSlots('chatComplete', body);
    const copy = withTexts(body, [{ path: slot!.path, text: 'A' }]);
    expect(copy).toEqual({ messages: [{ role: 'user', content: [{ type: 'text', text: 'A' }] }] });
    expect(body.messages[0]!.content[0]!.text).toBe('a');
  });
});
