import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Encrypts provider credentials at rest. Each value gets its own random 12-byte IV and is
 * stored as `v1:<key id>:<iv>:<tag>:<ciphertext>` (base64url parts). The key id is an HMAC of
 * the master key, not the key: it lets a wrong master key fail with a message that says so,
 * where AES-GCM alone could only say "authentication failed".
 */
export interface SecretBox {
  encrypt(plaintext: string): string;
  decrypt(stored: string): string;
  /** Short fingerprint of the master key, safe to log. */
  readonly keyId: string;
  /**
   * A 32-byte key for one purpose (signing download links, say), derived from the master key so
   * that no other key has to be kept, and so that a MAC made for one purpose is no use for another.
   */
  deriveKey(purpose: string): Buffer;
}

export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

export const MASTER_KEY_FILE = 'master.key';
const VERSION = 'v1';
const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const B64URL = /^[A-Za-z0-9_-]*$/;

export function createSecretBox(masterKey: Buffer): SecretBox {
  if (masterKey.length !== KEY_BYTES)
    throw new SecretBoxError(`The master key must be ${KEY_BYTES} bytes; got ${masterKey.length}.`);
  const key = Buffer.from(masterKey);
  const keyId = masterKeyId(key);

  return {
    keyId,
    deriveKey: (purpose) => createHmac('sha256', key).update(`svcgw derived key: ${purpose}`).digest(),
    encrypt(plaintext: string): string {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv(ALGORITHM, key, iv);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [
        VERSION,
        keyId,
        iv.toString('base64url'),
        cipher.getAuthTag().toString('base64url'),
        ciphertext.toString('base64url'),
      ].join(':');
    },

    decrypt(stored: string): string {
      const parts = stored.split(':');
      if (parts[0] !== VERSION)
        throw new SecretBoxError('The stored secret is not in a format this version understands (expected v1).');
      const [, storedKeyId, ivText, tagText, ciphertextText] = parts;
      if (
        parts.length !== 5 ||
        !storedKeyId ||
        !ivText ||
        !tagText ||
        ciphertextText === undefined ||
        ![ivText, tagText, ciphertextText].every((p) => B64URL.test(p))
      ) {
        throw new SecretBoxError('The stored secret is malformed.');
      }
      if (storedKeyId !== keyId) {
        throw new SecretBoxError(
          `The stored secret was encrypted with a different master key (key id ${storedKeyId}; the loaded key is ${keyId}). ` +
            `Set SVCGW_MASTER_KEY (or <data_dir>/${MASTER_KEY_FILE}) back to the key it was encrypted with.`,
        );
      }
      const iv = Buffer.from(ivText, 'base64url');
      const tag = Buffer.from(tagText, 'base64url');
      if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES)
        throw new SecretBoxError('The stored secret is malformed.');
      try {
        const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(Buffer.from(ciphertextText, 'base64url')), decipher.final()]).toString(
          'utf8',
        );
      } catch {
        throw new SecretBoxError(
          'The stored secret failed its integrity check: it was altered or encrypted with another key.',
        );
      }
    },
  };
}

export const isSealed = (value: string): boolean => value.startsWith(`${VERSION}:`);

function masterKeyId(key: Buffer): string {
  return createHmac('sha256', key).update('svcgw master key id').digest('base64url').slice(0, 8);
}

/** 64 hex characters, or base64 / base64url of 32 bytes (the forms the master_key setting takes). */
export function parseMasterKey(text: string, source = 'master key'): Buffer {
  const value = text.trim();
  let key: Buffer | null = null;
  if (/^[0-9a-fA-F]{64}$/.test(value)) key = Buffer.from(value, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value))
    key = Buffer.from(value.replace(/=$/, '').replace(/\+/g, '-').replace(/\//g, '_'), 'base64url');
  if (!key || key.length !== KEY_BYTES)
    throw new SecretBoxError(`The ${source} must be 32 bytes written as 64 hex characters or base64.`);
  return key;
}

/**
 * The master key: the `master_key` setting (SVCGW_MASTER_KEY) when given, otherwise
 * `<data_dir>/master.key`, generated on the first start. The file is created with `wx` (so of
 * two processes starting at once exactly one writes it; the other reads it) and mode 0600.
 */
export function loadMasterKey(
  config: { master_key?: string | undefined; data_dir: string },
  options: { onGenerated?: (path: string) => void } = {},
): Buffer {
  if (config.master_key !== undefined)
    return parseMasterKey(config.master_key, 'master_key setting (SVCGW_MASTER_KEY)');
  const path = join(config.data_dir, MASTER_KEY_FILE);
  const existing = readKeyFile(path);
  if (existing) return existing;

  mkdirSync(config.data_dir, { recursive: true, mode: 0o700 });
  const key = randomBytes(KEY_BYTES);
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Another process created it between our read and our open: use theirs once it is written.
    return readKeyFile(path) ?? failEmpty(path);
  }
  try {
    writeSync(fd, `${key.toString('hex')}\n`);
    fsyncSync(fd);
  } catch (error) {
    // Leave no empty key file behind (disk full, …): the next start would refuse it.
    closeSync(fd);
    rmSync(path, { force: true });
    throw error;
  }
  closeSync(fd);
  options.onGenerated?.(path);
  return key;
}

/** Reads the key file; an empty file is waited for briefly, as another process may be writing it. */
function readKeyFile(path: string): Buffer | null {
  for (let attempt = 0; ; attempt++) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new SecretBoxError(`Cannot read the master key file ${path}: ${(error as Error).message}`);
    }
    if (text.trim().length > 0) return parseMasterKey(text, `master key file ${path}`);
    if (attempt >= 20) return failEmpty(path);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
  }
}

function failEmpty(path: string): never {
  throw new SecretBoxError(
    `The master key file ${path} is empty. If no credential was ever stored with it, delete it and start again; otherwise restore it from a backup.`,
  );
}
