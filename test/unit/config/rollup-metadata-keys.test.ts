import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load-config.js';
import { parseRollupMetadataKeys } from '../../../src/config/rollup-metadata-keys.js';

const load = (keys: string) => () => loadConfig({ env: { SVCGW_ANALYTICS_ROLLUP_METADATA_KEYS: keys } });

describe('analytics_rollup_metadata_keys', () => {
  it('names keys and combinations canonically, without repeats', () => {
    expect(load(' env, team+env ,team, env + team,,')().analytics_rollup_metadata_keys).toBe(
      ' env, team+env ,team, env + team,,',
    );
    expect(parseRollupMetadataKeys(' env, team+env ,team, env + team,,')).toEqual(['env', 'env+team', 'team']);
    expect(parseRollupMetadataKeys('')).toEqual([]);
  });

  it('refuses the start on a combination it cannot sum, naming it', () => {
    const where = 'analytics_rollup_metadata_keys \\(from SVCGW_ANALYTICS_ROLLUP_METADATA_KEYS\\)';
    expect(load('env,env+env')).toThrow(new RegExp(`${where}: "env\\+env": a combination joins two different keys`));
    expect(load('a+b+c')).toThrow(/"a\+b\+c": a combination joins exactly two keys \(a key cannot contain "\+"\)/);
    expect(load('env+')).toThrow(/"env\+": a combination joins two non-empty keys/);
    expect(load('+')).toThrow(/a combination joins two non-empty keys/);
    expect(load('a,b,c,d,e,f,g,h,a+b')).toThrow(/at most 8 keys and combinations/);
    expect(load(`env+${'k'.repeat(129)}`)).toThrow(/at most 128 characters/);
    expect(load('a,b,c,d,e,f,g,a+b')().analytics_rollup_metadata_keys).toBe('a,b,c,d,e,f,g,a+b');
  });
});
