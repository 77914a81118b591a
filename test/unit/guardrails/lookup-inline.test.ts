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

describe('the lookup answering from memory', () => {
  it('answers without a promise once the workspace defaults are loaded, and loads them again after invalidate', async () => {
    let loads = 0;
    let defaults: string | null = JSON.stringify({ input_guardrails: [{ 'default.wordCount': { maxWords: 5 } }] });
    const workspaces = {
      findById: async () => {
        loads++;
        return { defaults };
      },
    } as unknown as WorkspaceRepository;
    const lookup = createGuardrailLookup({
      guardrails: {} as GuardrailRepository,
      workspaces,
      clock,
    });
    const first = lookup.forRequest({ organisationId: 'o', workspaceId: 'w', node });
    expect(first).toBeInstanceOf(Promise);
    expect((await first).before.map((g) => g.source)).toEqual([
      'workspace_defaults.input_guardrails[0]',
      'input_guardrails[0]',
    ]);
    const second = lookup.forRequest({ organisationId: 'o', workspaceId: 'w', node });
    expect(second).not.toBeInstanceOf(Promise);
    expect(second).toEqual(await first);
    expect(loads).toBe(1);
    defaults = null;
    lookup.invalidate();
    const third = await lookup.forRequest({ organisationId: 'o', workspaceId: 'w', node });
    expect(third.before.map((g) => g.source)).toEqual(['input_guardrails[0]']);
    expect(loads).toBe(2);
  });

  it('does not remember a load that failed', async () => {
    let fail = true;
    const workspaces = {
      findById: async () => {
        if (fail) throw new Error('database away');
        return { defaults: null };
      },
    } as unknown as WorkspaceRepository;
    const lookup = createGuardrailLookup({ guardrails: {} as GuardrailRepository, workspaces, clock });
    await expect(lookup.forRequest({ organisationId: 'o', workspaceId: 'w' })).rejects.toThrow('database away');
    fail = false;
    await expect(lookup.forRequest({ organisationId: 'o', workspaceId: 'w' })).resolves.toEqual({
      before: [],
      after: [],
      missing: [],
    });
  });
});
