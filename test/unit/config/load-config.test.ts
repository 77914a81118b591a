import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/load-config.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function settingsFile(content: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'svcgw-cfg-'));
  dirs.push(dir);
  const path = join(dir, 'svcgw.json');
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

describe('loadConfig', () => {
  it('uses the defaults when nothing is set', () => {
    const config = loadConfig({ env: {}, cwd: '/srv' });
    expect(config).toMatchObject({ host: '127.0.0.1', port: 8787, data_dir: '/srv/data', log_level: 'info', config_file: null });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('applies flags over env over file over defaults, key by key', () => {
    const file = settingsFile({ host: '0.0.0.0', port: 9001, data_dir: '/from-file', log_level: 'debug' });
    const config = loadConfig({
      flags: { port: '9003', config: file },
      env: { SVCGW_PORT: '9002', SVCGW_DATA_DIR: '/from-env' },
    });
    expect(config.port).toBe(9003); // flag beats env and file
    expect(config.data_dir).toBe('/from-env'); // env beats file
    expect(config.host).toBe('0.0.0.0'); // file beats default
    expect(config.log_level).toBe('debug');
    expect(config.config_file).toBe(file);
  });

  it('finds the settings file through SVCGW_CONFIG', () => {
    const file = settingsFile({ port: 7000 });
    expect(loadConfig({ env: { SVCGW_CONFIG: file } }).port).toBe(7000);
  });

  it('names the bad setting and where it came from', () => {
    expect(() => loadConfig({ env: { SVCGW_PORT: '70000' } })).toThrow(/port \(from SVCGW_PORT\): .*65535/);
    expect(() => loadConfig({ flags: { port: 'abc' }, env: {} })).toThrow(/port \(from --port\)/);
    const file = settingsFile({ log_level: 'loud' });
    expect(() => loadConfig({ env: { SVCGW_CONFIG: file } })).toThrow(new RegExp(`log_level \\(from ${file} → log_level\\)`));
  });

  it('rejects unknown settings in the file, and files that are not JSON objects', () => {
    expect(() => loadConfig({ env: { SVCGW_CONFIG: settingsFile({ prot: 1 }) } })).toThrow(/unknown setting\(s\): prot/);
    expect(() => loadConfig({ env: { SVCGW_CONFIG: settingsFile('{not json') } })).toThrow(/not valid JSON/);
    expect(() => loadConfig({ env: { SVCGW_CONFIG: settingsFile([1]) } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { SVCGW_CONFIG: '/nonexistent/svcgw.json' } })).toThrow(/cannot read settings file/);
  });

  it('checks the bootstrap key and the master key formats', () => {
    expect(() => loadConfig({ env: { SVCGW_BOOTSTRAP_ADMIN_KEY: 'short' } })).toThrow(/bootstrap_admin_key/);
    expect(() => loadConfig({ env: { SVCGW_MASTER_KEY: 'zz' } })).toThrow(/master_key/);
    expect(loadConfig({ env: { SVCGW_MASTER_KEY: 'ab'.repeat(32) } }).master_key).toBe('ab'.repeat(32));
  });

  it('ships an example settings file that loads', () => {
    const config = loadConfig({ flags: { config: 'config/svcgw.json' }, env: {}, cwd: join(import.meta.dirname, '../../..') });
    expect(config.port).toBe(8787);
  });
});
