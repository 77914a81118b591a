import { describe, expect, it } from 'vitest';
import { lastUsedOption } from '../../src/admin/observability/last-used-option.js';

const attempts = (...tries: Array<{ target: string; path?: string }>) =>
  JSON.stringify(tries.map((t) => ({ ...t, provider: 'openai', status: 200, latency_ms: 1 })));

describe("a log's lastUsedOptionJsonPath", () => {
  it('is `config` without a config, or when the config itself named the provider', () => {
    expect(lastUsedOption(null)).toEqual({ jsonPath: 'config', index: undefined, target: undefined });
    expect(lastUsedOption(attempts({ target: 'root' }))).toEqual({
      jsonPath: 'config',
      index: undefined,
      target: 'root',
    });
  });

  it('is the index path of the last attempt, from its label or, for a named target, its path', () => {
    expect(lastUsedOption(attempts({ target: 'targets[0]' }, { target: 'targets[1]' }))).toEqual({
      jsonPath: 'config.targets[1]',
      index: 1,
      target: 'targets[1]',
    });
    expect(lastUsedOption(attempts({ target: 'backup.targets[0]', path: 'targets[1].targets[0]' }))).toMatchObject({
      jsonPath: 'config.targets[1].targets[0]',
      index: 0,
    });
  });

  it('says `config` for a named target recorded without its path, and survives a damaged record', () => {
    expect(lastUsedOption(attempts({ target: 'last-resort' })).jsonPath).toBe('config');
    expect(lastUsedOption('not json').jsonPath).toBe('config');
    expect(lastUsedOption('[{"target": 3}]').jsonPath).toBe('config');
  });
});
