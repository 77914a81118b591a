import { describe, expect, it } from 'vitest';
import { renderPrompt, templateShape, type PromptContent } from '../../../src/prompts/render.js';
import { AppError } from '../../../src/lib/errors.js';

const content = (string: string, extra: Partial<PromptContent> = {}): PromptContent => ({
  string,
  parameters: null,
  model: 'm',
  functions: null,
  tools: null,
  tool_choice: null,
  is_raw_template: false,
  ...extra,
});

const refusal = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
};

describe('prompt templates', () => {
  it('prints variable values as data: tags inside a value are not rendered again', () => {
    const rendered = renderPrompt(
      content('Hi {{name}}'),
      { name: '{{secret}} {{>p}}', secret: 'S' },
      new Map([['p', 'PARTIAL']]),
    );
    expect(rendered.body.messages).toEqual([{ role: 'user', content: 'Hi {{secret}} {{>p}}' }]);
  });

  it('tells chat messages, text and raw text apart', () => {
    expect(templateShape({ string: '[{"role":"user","content":"hi"}]', is_raw_template: false }).kind).toBe('chat');
    expect(templateShape({ string: '[1, 2]', is_raw_template: false }).kind).toBe('chat-text');
    expect(templateShape({ string: '[not json', is_raw_template: false }).kind).toBe('chat-text');
    expect(templateShape({ string: '[{"role":"user","content":"hi"}]', is_raw_template: true }).kind).toBe(
      'completion',
    );
  });

  it('requires the variables it prints, not those of sections that do not render', () => {
    const template = '{{greeting}} {{#user}}{{name}}{{/user}}{{^user}}{{fallback}}{{/user}} {{#items}}{{.}},{{/items}}';
    const missing = refusal(() => renderPrompt(content(template), { user: { name: 'Ann' } }, new Map()));
    expect(missing.param).toBe('variables.greeting');
    const both = refusal(() => renderPrompt(content(template), {}, new Map()));
    expect(both.message).toContain('greeting, fallback');
    const ok = renderPrompt(content(template), { greeting: 'Hi', user: { name: 'Ann' }, items: ['a', 'b'] }, new Map());
    expect(ok.body.messages).toEqual([{ role: 'user', content: 'Hi Ann a,b,' }]);
    // An outer variable is seen from inside a section; a falsy value counts as given.
    const outer = renderPrompt(
      content('{{#user}}{{greeting}}{{/user}}{{empty}}'),
      { user: {}, greeting: 'Yo', empty: '' },
      new Map(),
    );
    expect(outer.body.messages).toEqual([{ role: 'user', content: 'Yo' }]);
    // Dotted names need the whole path.
    expect(refusal(() => renderPrompt(content('{{a.b}}'), { a: {} }, new Map())).param).toBe('variables.a.b');
  });

  it('checks and renders variables inside partials, without escaping', () => {
    const partials = new Map([['sig', '-- {{agent}}']]);
    expect(refusal(() => renderPrompt(content('Hi {{>sig}}'), {}, partials)).param).toBe('variables.agent');
    const ok = renderPrompt(content('{{q}} {{>sig}}'), { q: '"a" & <b>', agent: { id: 1 } }, partials);
    expect(ok.body.messages).toEqual([{ role: 'user', content: '"a" & <b> -- {"id":1}' }]);
  });

  it('lays hyperparameters over the stored parameters, and needs a model', () => {
    const stored = content('x', { parameters: { temperature: 0.1, max_tokens: 5 }, model: 'stored' });
    const rendered = renderPrompt(stored, {}, new Map(), { temperature: 0.9, model: 'other' });
    expect(rendered.body).toEqual({
      temperature: 0.9,
      max_tokens: 5,
      model: 'other',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(refusal(() => renderPrompt(content('x', { model: null }), {}, new Map())).param).toBe('model');
    const raw = renderPrompt(content('Say {{w}}', { is_raw_template: true }), { w: 'hi' }, new Map());
    expect(raw).toEqual({ endpoint: 'complete', body: { model: 'm', prompt: 'Say hi' } });
  });
});
