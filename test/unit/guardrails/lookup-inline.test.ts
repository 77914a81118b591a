import { describe, expect, it } from 'vitest';
import { createGuardrailLookup } from '../../../src/guardrails/store/lookup.js';
import type { GuardrailRepository } from '../../../src/storage/repositories/guardrails.js';
import type { WorkspaceRepository } from '../../../src/storage/repositories/workspaces.js';

const clock = { now: () => 0 };
const node = {
  input_guardrails: [{ 'default.contains': { operator: 'none', words: ['secret'] }, deny: true }],
  output_guardrails: [{ id: 'out', checks: [{ id: 'default.wordCount', parameters: { maxWords: 10 } }] }],
};

function lookupWith(defaults: unknown, stored: Record<string, unknown> = {}) {
  const guardrails = {
    findBySlug: async () => null,
    findById: async () => null,
    ...stored,
  } as unknown as GuardrailRepository;
  const workspaces = { findById: async () => ({ defaults }) } as unknown as WorkspaceRepository;
  return createGuardrailLookup({ guardrails, workspaces, clock });
}

describe('the lookup with inline guardrails only', () => {
  it('gives each request the same guardrails, in order, named by where they were written', async () => {
    const lookup = lookupWith(
      JSON.stringify({ input_guardrails: [{ 'default.characterCount': { maxCharacters: 99 } }] }),
    );
    const first = await lookup.forRequest({ organisationId: 'o', workspaceId: 'w', node });
    const second = await lookup.forRequest({ organisationId: 'o', workspaceId: 'w', node });
    expect(first.missing).toEqual([]);
    expect(first.before.map((g) => [g.source, g.checks.map((c) => c.check)])).toEqual([
      ['workspace_defaults.input_guardrails[0]', ['default.characterCount']],
      ['input_guardrails[0]', ['default.contains']],
    ]);
    expect(first.after.map((g) => [g.source, g.name])).toEqual([['output_guardrails[0]', 'out']]);
    expect(second).toEqual(first);
    // Worked out once: the same objects, in lists of each request's own.
    expect(second.before[1]).toBe(first.before[1]);
    expect(second.before).not.toBe(first.before);
  });

  it('still reports a reference that names nothing beside inline guardrails', async () => {
    const lookup = lookupWith(null);
    const found = await lookup.forRequest({
      organisationId: 'o',
      workspaceId: 'w',
      node: { ...node, before_request_hooks: [{ type: 'guardrail', id: 'pg-gone' }] },
    });
    expect(found.missing).toEqual([{ ref: 'pg-gone', source: 'before_request_hooks[0]' }]);
    expect(found.before.map((g) => g.source)).toEqual(['input_guardrails[0]']);
  });
});
