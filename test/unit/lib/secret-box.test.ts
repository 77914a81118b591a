import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  createSecretBox,
  loadMasterKey,
  MASTER_KEY_FILE,
  parseMasterKey,
  SecretBoxError,
} from '../../../src/lib/secret-box.js';

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svcgw-secret-box-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('createSecretBox', () => {
  const box = createSecretBox(randomBytes(32));

  it('round-trips text, including empty and non-ASCII values', () => {
    for (const value of ['sk-proj-abcdef0123456789', '', 'ключ 🔑 key', 'x'.repeat(10_000)]) {
      expect(box.decrypt(box.encrypt(value))).toBe(value);
    }
  });

  it('stores a versioned string with a fresh IV every time and no plaintext', () => {
    const a = box.encrypt('sk-secret-value-1234');
    const b = box.encrypt('sk-secret-value-1234');
    expect(a).toMatch(/^v1:[A-Za-z0-9_-]{8}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]+$/);
    expect(a).not.toBe(b);
    expect(a.split(':')[2]).not.toBe(b.split(':')[2]);
    expect(a).not.toContain('sk-secret');
  });

  it('fails with a clear error under another master key', () => {
    const stored = box.encrypt('sk-secret');
    const other = createSecretBox(randomBytes(32));
    expect(() => other.decrypt(stored)).toThrow(SecretBoxError);
    expect(() => other.decrypt(stored)).toThrow(/different master key/);
  });

  it('detects tampering', () => {
    const stored = box.encrypt('sk-secret-value');
    const parts = stored.split(':');
    const ciphertext = Buffer.from(parts[4]!, 'base64url');
    ciphertext[0] = ciphertext[0]! ^ 1;
    parts[4] = ciphertext.toString('base64url');
    expect(() => box.decrypt(parts.join(':'))).toThrow(/integrity check/);
  });

  it('refuses malformed and unknown-version values', () => {
    expect(() => box.decrypt('sk-plaintext')).toThrow(/format/);
    expect(() => box.decrypt('v1:abc')).toThrow(/malformed/);
    expect(() => box.decrypt(`v1:${box.keyId}:!!:??:..`)).toThrow(/malformed/);
  });

  it('takes only 32-byte keys', () => {
    expect(() => createSecretBox(randomBytes(16))).toThrow(/32 bytes/);
  });
});

describe('parseMasterKey', () => {
  const raw = randomBytes(32);
  it('reads hex, base64 and base64url', () => {
    expect(parseMasterKey(raw.toString('hex')).equals(raw)).toBe(true);
    expect(parseMasterKey(raw.toString('base64')).equals(raw)).toBe(true);
    expect(parseMasterKey(raw.toString('base64url')).equals(raw)).toBe(true);
    expect(parseMasterKey(`${raw.toString('hex')}\n`).equals(raw)).toBe(true);
  });
  it('refuses anything else', () => {
    expect(() => parseMasterKey('too-short')).toThrow(/32 bytes/);
    expect(() => parseMasterKey(randomBytes(31).toString('hex'))).toThrow(/32 bytes/);
  });
});

describe('loadMasterKey', () => {
  it('uses the master_key setting when given, and writes no file', () => {
    const dir = tempDir();
    const raw = randomBytes(32);
    expect(loadMasterKey({ master_key: raw.toString('hex'), data_dir: dir }).equals(raw)).toBe(true);
    expect(() => statSync(join(dir, MASTER_KEY_FILE))).toThrow();
  });

  it('generates <data_dir>/master.key once with mode 0600, then reuses it', () => {
    const dir = join(tempDir(), 'nested', 'data');
    const generated: string[] = [];
    const first = loadMasterKey({ data_dir: dir }, { onGenerated: (p) => generated.push(p) });
    const path = join(dir, MASTER_KEY_FILE);
    expect(generated).toEqual([path]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8').trim()).toBe(first.toString('hex'));
    const second = loadMasterKey({ data_dir: dir }, { onGenerated: (p) => generated.push(p) });
    expect(generated).toHaveLength(1);
    expect(second.equals(first)).toBe(true);
    const box = createSecretBox(first);
    expect(createSecretBox(second).decrypt(box.encrypt('still readable'))).toBe('still readable');
  });

  it('refuses an empty or corrupt key file instead of replacing it', () => {
    const dir = tempDir();
    writeFileSync(join(dir, MASTER_KEY_FILE), 'not a key\n', { mode: 0o600 });
    expect(() => loadMasterKey({ data_dir: dir })).toThrow(/master key file/);
    writeFileSync(join(dir, MASTER_KEY_FILE), '', { mode: 0o600 });
    expect(() => loadMasterKey({ data_dir: dir })).toThrow(/is empty/);
  });
});
