import { randomToken, sha256Hex } from '../../lib/crypto.js';

/**
 * Prefix of session tokens: told apart from API keys (`svc-`) and JWTs (`eyJ…`) by their first
 * characters, so that one header carries any of them and a leaked token says what it is.
 */
export const SESSION_PREFIX = 'svs-';
const SESSION_RE = /^svs-[A-Za-z0-9_-]{43}$/;

/** 32 random bytes: as for API keys, a plain SHA-256 is a safe way to store them. */
export const generateSessionToken = (): string => `${SESSION_PREFIX}${randomToken(32)}`;

export const hashSessionToken = (raw: string): string => sha256Hex(raw);

export const isSessionToken = (raw: string): boolean => raw.startsWith(SESSION_PREFIX);

export const isWellFormedSessionToken = (raw: string): boolean => SESSION_RE.test(raw);
