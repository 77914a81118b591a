import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { normaliseBaseUrl, type Connection } from './client/http-client.js';
import { FatalError } from './fatal-error.js';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8787';
export const DEFAULT_PROFILE = 'default';

export interface Profile {
  base_url: string;
  api_key: string;
}
export interface ProfilesFile {
  current?: string;
  profiles: Record<string, Profile>;
}

/** Checked by hand rather than with zod, which would slow every command's start. */
function asProfilesFile(value: unknown): ProfilesFile {
  const file = value as Partial<ProfilesFile> | null;
  if (!file || typeof file !== 'object' || (file.current !== undefined && typeof file.current !== 'string'))
    throw new Error('bad file');
  const profiles = file.profiles ?? {};
  for (const profile of Object.values(profiles)) {
    if (typeof profile?.base_url !== 'string' || typeof profile.api_key !== 'string') throw new Error('bad profile');
  }
  return { ...(file.current !== undefined ? { current: file.current } : {}), profiles };
}

/** `$XDG_CONFIG_HOME/svcgw/profiles.json`, else `~/.config/svcgw/profiles.json`. */
export function profilesPath(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.length > 0
      ? env.XDG_CONFIG_HOME
      : join(env.HOME ?? homedir(), '.config');
  return join(base, 'svcgw', 'profiles.json');
}

export function readProfiles(path: string): ProfilesFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw new FatalError(`cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    return asProfilesFile(JSON.parse(text));
  } catch {
    throw new FatalError(`${path} is not a valid profiles file; fix it or run svcgw login again after removing it`);
  }
}

/** Writes the file owner-only (0600, directory 0700): it holds API keys. */
export function writeProfiles(path: string, file: ProfilesFile): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

export interface ConnectionFlags {
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  profile?: string | undefined;
}

/**
 * Where to connect and with which key: `--base-url`/`SVCGW_BASE_URL` and
 * `--api-key`/`SVCGW_API_KEY` first, then the profile (`--profile`/`SVCGW_PROFILE`, else the one
 * `svcgw login` made current). A stored key is never sent to another server than its profile's,
 * unless that profile was named.
 */
export function resolveConnection(
  flags: ConnectionFlags,
  path = profilesPath(),
): Connection & { profile: string | null } {
  const file = readProfiles(path);
  const name = flags.profile ?? file.current ?? DEFAULT_PROFILE;
  const stored = file.profiles[name];
  if (flags.profile !== undefined && !stored)
    throw new FatalError(
      `there is no profile named ${flags.profile} in ${path}; create it with svcgw login --profile ${flags.profile}`,
      2,
    );
  const baseUrl = normaliseBaseUrl(flags.baseUrl ?? stored?.base_url ?? DEFAULT_BASE_URL);
  const usable =
    stored && (flags.profile !== undefined || normaliseBaseUrl(stored.base_url) === baseUrl) ? stored : undefined;
  const apiKey = flags.apiKey ?? usable?.api_key;
  if (!apiKey) throw new FatalError('no API key: pass --api-key, set SVCGW_API_KEY, or save one with svcgw login', 2);
  return { baseUrl, apiKey, profile: flags.apiKey === undefined && usable ? name : null };
}
