import type { JWTPayload } from 'jose';
import { DATA_PLANE_SCOPES, WORKSPACE_SCOPES } from '../scopes.js';
import type { JwtClaimNames } from './settings.js';

/** What a verified token says about its caller, read through the configured claim names. */
export interface TokenIdentity {
  /** The user claim's value (`sub` by default): stable, and the basis of the caller's key id. */
  subject: string;
  email: string | null;
  /** The workspace slug or id the token is for. */
  workspace: string;
  /** The organisation id the token names, when it names one. */
  organisation: string | null;
  /** Every scope the token carries, as given. */
  claimedScopes: string[];
  /** Those a JWT may use (see grantedScopes). */
  scopes: Set<string>;
}

export type ClaimProblem = { reason: 'missing_claim' | 'invalid_claim'; message: string };

const MAX_VALUE = 255;
const MAX_SCOPES = 200;

const names = (list: readonly string[]) => list.map((name) => `"${name}"`).join(' or ');

/** The first claim of `list` the token has, with its name. */
function first(payload: JWTPayload, list: readonly string[]): { name: string; value: unknown } | null {
  for (const name of list)
    if (payload[name] !== undefined && payload[name] !== null) return { name, value: payload[name] };
  return null;
}

function text(
  payload: JWTPayload,
  list: readonly string[],
  what: string,
  required: boolean,
): string | null | ClaimProblem {
  const found = first(payload, list);
  if (!found) {
    return required ? { reason: 'missing_claim', message: `The token has no ${what} claim (${names(list)}).` } : null;
  }
  if (typeof found.value !== 'string' || found.value.trim() === '' || found.value.length > MAX_VALUE)
    return {
      reason: 'invalid_claim',
      message: `The token's "${found.name}" claim (${what}) must be a non-empty string of at most ${MAX_VALUE} characters.`,
    };
  return found.value.trim();
}

const isProblem = (value: unknown): value is ClaimProblem =>
  typeof value === 'object' && value !== null && 'reason' in value;

/**
 * Scopes a JWT may use: the data plane's (`completions.write`, `mcp.invoke`, `agents.invoke`) and, on the control
 * plane, only reading and listing (`.read`, `.list`, `.view`), as the spec says; and only
 * scopes a workspace key may hold, since a token acts in one workspace. Others are dropped.
 */
export function grantedScopes(claimed: readonly string[]): Set<string> {
  const workspace = new Set(WORKSPACE_SCOPES);
  return new Set(
    claimed.filter(
      (scope) => workspace.has(scope) && (DATA_PLANE_SCOPES.has(scope) || /\.(read|list|view)$/.test(scope)),
    ),
  );
}

/** The refusal of a route whose scope the JWT does not carry, saying when no JWT ever could. */
export function jwtLacksScope(scope: string): string {
  return grantedScopes([scope]).size === 0
    ? `The JWT lacks the scope ${scope}: JWTs carry the gateway's scopes and, on the control plane, only read and list scopes (docs/jwt.md).`
    : `The JWT lacks the scope ${scope}.`;
}

/** Space-separated (OAuth's `scope`) or an array of strings (what many IdPs put in `scopes`). */
function readScopes(payload: JWTPayload, list: readonly string[]): string[] | ClaimProblem {
  const found = first(payload, list);
  if (!found) return { reason: 'missing_claim', message: `The token has no scopes claim (${names(list)}).` };
  const { name, value } = found;
  const scopes =
    typeof value === 'string'
      ? value.split(/\s+/).filter(Boolean)
      : Array.isArray(value) && value.every((item) => typeof item === 'string')
        ? value
        : null;
  if (scopes === null || scopes.length > MAX_SCOPES)
    return {
      reason: 'invalid_claim',
      message: `The token's "${name}" claim (scopes) must be a space-separated string or an array of at most ${MAX_SCOPES} strings.`,
    };
  return scopes;
}

/** Reads the caller out of a verified payload, or says which claim is missing or wrong. */
export function readIdentity(payload: JWTPayload, claims: JwtClaimNames): TokenIdentity | ClaimProblem {
  const subject = text(payload, claims.user, 'user', true);
  if (isProblem(subject)) return subject;
  const email = text(payload, claims.email, 'e-mail', false);
  if (isProblem(email)) return email;
  const workspace = text(payload, claims.workspace, 'workspace', true);
  if (isProblem(workspace)) return workspace;
  const organisation = text(payload, claims.organisation, 'organisation', false);
  if (isProblem(organisation)) return organisation;
  const claimedScopes = readScopes(payload, claims.scopes);
  if (isProblem(claimedScopes)) return claimedScopes;
  return {
    subject: subject!,
    email,
    workspace: workspace!,
    organisation,
    claimedScopes,
    scopes: grantedScopes(claimedScopes),
  };
}

export const isClaimProblem = isProblem;
