import type { Principal } from '../../auth/principal.js';
import { generateScimToken, hashScimToken, scimTokenHint } from '../../auth/scim-tokens.js';
import type { Clock } from '../../lib/clock.js';
import { invalid, notFound } from '../../lib/errors.js';
import { isUuid, newId } from '../../lib/ids.js';
import type { ScimTokenRepository, ScimTokenRow } from '../../storage/repositories/scim-tokens.js';
import { pageWindow } from '../shared/pagination.js';
import type { CreateScimTokenBody, ScimTokenObject } from './admin-schemas.js';

/**
 * SCIM tokens: what an identity provider authenticates with on the SCIM routes. Made by
 * organisation owners and admins, shown once, stored as a SHA-256; revoking one stops it at once.
 */
export function createScimTokenService(deps: { tokens: ScimTokenRepository; clock: Clock }) {
  const now = () => new Date(deps.clock.now()).toISOString();

  return {
    async create(principal: Principal, body: CreateScimTokenBody): Promise<{ row: ScimTokenRow; token: string }> {
      const expiresAt = body.expires_at ? new Date(body.expires_at).toISOString() : null;
      if (expiresAt !== null && Date.parse(expiresAt) <= deps.clock.now())
        throw invalid('expires_at', 'expires_at must be in the future.');
      const token = generateScimToken();
      const stamp = now();
      const row: ScimTokenRow = {
        id: newId(),
        organisation_id: principal.organisationId,
        name: body.name,
        token_hash: hashScimToken(token),
        token_hint: scimTokenHint(token),
        status: 'active',
        expires_at: expiresAt,
        created_by_user_id: principal.userId,
        created_by_key_id: principal.keyId,
        created_at: stamp,
        last_updated_at: stamp,
        revoked_at: null,
      };
      await deps.tokens.insert(row);
      return { row, token };
    },

    async list(principal: Principal, query: { page_size: number; current_page: number }) {
      const { total, rows } = await deps.tokens.list(principal.organisationId, pageWindow(query));
      return { total, data: rows.map(toTokenObject) };
    },

    async revoke(principal: Principal, id: string): Promise<void> {
      const row = isUuid(id) ? await deps.tokens.findById(principal.organisationId, id) : undefined;
      if (!row) throw notFound('SCIM token', 'tokenId');
      await deps.tokens.revoke(row.id, now());
    },
  };
}

export type ScimTokenService = ReturnType<typeof createScimTokenService>;

export const toTokenObject = (row: ScimTokenRow): ScimTokenObject => ({
  object: 'scim_token',
  id: row.id,
  name: row.name,
  token_hint: row.token_hint,
  status: row.status,
  expires_at: row.expires_at,
  created_at: row.created_at,
  revoked_at: row.revoked_at,
});
