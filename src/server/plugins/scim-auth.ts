import type { IncomingHttpHeaders } from 'node:http';
import type { Principal } from '../../auth/principal.js';
import type { ScimTokenVerifier } from '../../auth/scim-tokens.js';
import { AppError } from '../../lib/errors.js';

const REJECTIONS = {
  malformed: 'The SCIM token is malformed.',
  unknown: 'The SCIM token is not valid.',
  revoked: 'The SCIM token has been revoked.',
  expired: 'The SCIM token has expired.',
} as const;

/**
 * The SCIM routes' authentication: `Authorization: Bearer <SCIM token>` and nothing else, as
 * identity providers send it. API keys are refused there, so that a leaked gateway key cannot
 * provision users, and a SCIM token reaches no other route.
 */
export async function authenticateScim(
  verifier: ScimTokenVerifier | undefined,
  headers: IncomingHttpHeaders,
): Promise<Principal> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
  if (!match || !verifier)
    throw new AppError(
      'INVALID_SCIM_TOKEN',
      'Missing SCIM token: send it as Authorization: Bearer <token> (create one with POST /v1/scim/tokens).',
    );
  const result = await verifier.verify(match[1]!);
  if (!result.ok) throw new AppError('INVALID_SCIM_TOKEN', REJECTIONS[result.reason]);
  return result.principal;
}
