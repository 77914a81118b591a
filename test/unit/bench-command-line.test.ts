import { describe, expect, it } from 'vitest';
import { settingsEnv } from '../../scripts/bench/command-line.js';

const refuse = (problem: string): never => {
  throw new Error(problem);
};

describe('bench --setting', () => {
  it('gives the gateway each setting as its SVCGW_ variable, the value as written', () => {
    expect(settingsEnv(['sqlite_checkpoint_worker=ON', 'sqlite_cache_mb=16', 'log_format=json=x'], refuse)).toEqual({
      SVCGW_SQLITE_CHECKPOINT_WORKER: 'ON',
      SVCGW_SQLITE_CACHE_MB: '16',
      SVCGW_LOG_FORMAT: 'json=x',
    });
    expect(settingsEnv([], refuse)).toEqual({});
  });

  it('refuses an item without a setting name and a value', () => {
    for (const item of ['sqlite_cache_mb', '=ON', 'SVCGW_PORT=1', 'sqlite-cache-mb=16'])
      expect(() => settingsEnv([item], refuse)).toThrow(`not '${item}'`);
  });
});
