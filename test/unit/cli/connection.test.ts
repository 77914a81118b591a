import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { normaliseBaseUrl, serverError } from '../../../src/cli/client/http-client.js';
import { createProgress, renderTable } from '../../../src/cli/output.js';
import { profilesPath, resolveConnection, writeProfiles } from '../../../src/cli/profiles.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svcgw-cli-'));
  dirs.push(dir);
  return join(dir, 'svcgw', 'profiles.json');
}

describe('connection', () => {
  it('reads profiles from $XDG_CONFIG_HOME, else ~/.config', () => {
    expect(profilesPath({ XDG_CONFIG_HOME: '/x' })).toBe('/x/svcgw/profiles.json');
    expect(profilesPath({ HOME: '/home/ana' })).toBe('/home/ana/.config/svcgw/profiles.json');
  });

  it('prefers flags, then the current profile; never sends a stored key to another server unless the profile is named', () => {
    const path = tempFile();
    writeProfiles(path, {
      current: 'prod',
      profiles: {
        prod: { base_url: 'https://gw.example.com/v1', api_key: 'svc-prod' },
        local: { base_url: 'http://127.0.0.1:8787', api_key: 'svc-local' },
      },
    });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(resolveConnection({}, path)).toEqual({
      baseUrl: 'https://gw.example.com',
      apiKey: 'svc-prod',
      profile: 'prod',
    });
    expect(resolveConnection({ profile: 'local' }, path)).toMatchObject({
      baseUrl: 'http://127.0.0.1:8787',
      apiKey: 'svc-local',
    });
    expect(resolveConnection({ apiKey: 'svc-flag' }, path)).toMatchObject({
      baseUrl: 'https://gw.example.com',
      apiKey: 'svc-flag',
    });
    expect(() => resolveConnection({ baseUrl: 'https://evil.example.com' }, path)).toThrow(/no API key/);
    expect(() => resolveConnection({ profile: 'nope' }, path)).toThrow(/no profile named nope/);
    expect(() => resolveConnection({ baseUrl: 'ftp://x', apiKey: 'k' }, path)).toThrow(/http/);
  });

  it('normalises base URLs and words server errors for people', () => {
    expect(normaliseBaseUrl('http://h:1/')).toBe('http://h:1');
    expect(normaliseBaseUrl('http://h:1/v1/')).toBe('http://h:1');
    expect(normaliseBaseUrl('https://h/gateway/v1')).toBe('https://h/gateway');
    expect(serverError('http://h', 404, { error: { message: 'API key not found.', code: 'NOT_FOUND' } }).message).toBe(
      'API key not found. (HTTP 404 NOT_FOUND)',
    );
    expect(serverError('http://h', 401, { error: { message: 'The API key is not valid.' } }).message).toMatch(
      /^the API key was refused by http:\/\/h/,
    );
  });

  it('renders aligned tables', () => {
    const table = renderTable(
      [
        { a: 'x', b: null },
        { a: 'longer', b: ['p', 'q'] },
      ],
      [
        { header: 'a', value: (r) => r.a },
        { header: 'b', value: (r) => r.b },
      ],
    );
    expect(table.split('\n')).toEqual(['A       B', 'x       -', 'longer  p,q']);
  });
});

describe('progress', () => {
  it('is drawn on a terminal only, and cleared when done', () => {
    const written: string[] = [];
    const tty = { isTTY: true, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream;
    const progress = createProgress('applying', tty);
    progress.update(1, 3, 'create workspace team-a');
    progress.done();
    expect(written.join('')).toContain('applying 1/3 create workspace team-a');
    expect(written.at(-1)).toBe('\r\x1b[2K');
    const piped: string[] = [];
    const pipe = createProgress('applying', {
      isTTY: false,
      write: (text: string) => piped.push(text),
    } as unknown as NodeJS.WriteStream);
    pipe.update(1, 3);
    pipe.done();
    expect(piped).toEqual([]);
  });
});
