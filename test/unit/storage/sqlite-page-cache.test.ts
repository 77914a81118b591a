import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load-config.js';
import { DEFAULT_SQLITE_CACHE_MB, openDatabase, rawSqlite } from '../../../src/storage/database.js';

/** SQLite reports a cache size given in KiB as a negative number of KiB. */
async function pageCacheKib(settings: Record<string, string>): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svcgw-cache-'));
  const db = openDatabase(loadConfig({ env: { SVCGW_DATA_DIR: dataDir, ...settings } }));
  try {
    return -(rawSqlite(db)!.pragma('cache_size', { simple: true }) as number);
  } finally {
    await db.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('SQLite page cache', () => {
  it('is 4 MiB unless SQLITE_CACHE_MB says otherwise, instead of the 16 MiB better-sqlite3 builds in', async () => {
    expect(DEFAULT_SQLITE_CACHE_MB).toBe(4);
    expect(await pageCacheKib({})).toBe(4 * 1024);
    expect(await pageCacheKib({ SVCGW_SQLITE_CACHE_MB: '64' })).toBe(64 * 1024);
  });

  it('refuses a size out of bounds, naming the setting', () => {
    expect(() => loadConfig({ env: { SVCGW_SQLITE_CACHE_MB: '0' } })).toThrow(
      /sqlite_cache_mb \(from SVCGW_SQLITE_CACHE_MB\)/,
    );
    expect(() => loadConfig({ env: { SVCGW_SQLITE_CACHE_MB: 'lots' } })).toThrow(/sqlite_cache_mb/);
  });
});
