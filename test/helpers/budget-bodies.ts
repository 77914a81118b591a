/**
 * Chat bodies for budget tests and scripts/budget-overshoot.ts: English, Chinese and a 40 KB
 * `tools` definition, each bounded by max_tokens. Imports nothing from vitest.
 */

export const ENGLISH_TEXT =
  'Summarise the quarterly report for the board in plain words, with the figures that matter most. ';
export const CHINESE_TEXT = '请用简单的语言为董事会总结季度报告，并列出最重要的数字和需要注意的风险。';

/** About 40 KB of JSON: 40 functions with long descriptions and a few parameters each. */
export function largeTools(): unknown[] {
  return Array.from({ length: 40 }, (_, i) => ({
    type: 'function',
    function: {
      name: `lookup_record_${i}`,
      description: `Looks up record ${i} in the inventory and returns its fields. `.repeat(12),
      parameters: {
        type: 'object',
        properties: {
          id: { type: 'string', description: 'The record id, as shown in the list view.' },
          fields: { type: 'array', items: { type: 'string' } },
        },
        required: ['id'],
      },
    },
  }));
}

export type BudgetBodyKind = 'english' | 'chinese' | 'tools';

export function budgetBody(kind: BudgetBodyKind, model = 'gpt-4o'): Record<string, unknown> {
  const user = (content: string) => [{ role: 'user', content }];
  switch (kind) {
    case 'english':
      return { model, messages: user(ENGLISH_TEXT.repeat(3)), max_tokens: 20 };
    case 'chinese':
      return { model, messages: user(CHINESE_TEXT.repeat(3)), max_tokens: 20 };
    case 'tools':
      return { model, messages: user('Find record 7.'), tools: largeTools(), max_tokens: 20 };
  }
}
