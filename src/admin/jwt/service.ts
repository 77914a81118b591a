import { parseStoredSettings, storedSettings, type JwtSettings } from '../../auth/jwt/settings.js';
import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import type { JwtSettingsRepository, JwtSettingsRow } from '../../storage/repositories/jwt-settings.js';
import { uniqueViolation } from '../../storage/unique-violation.js';
import type { JwtSettingsObject } from './schemas.js';

const notConfigured = () =>
  new AppError(
    'NOT_FOUND',
    'JWT authentication is not configured for this organisation (PUT /v1/settings/jwt sets it up).',
  );

const issuerTaken = () =>
  new AppError('CONFLICT', 'Another organisation of this server already accepts tokens of this issuer.', {
    param: 'issuer',
  });

/**
 * An organisation's JWT authentication settings (docs/jwt.md). Changes call `onChange`, which
 * clears the authenticator's caches here and on every other instance.
 */
export function createJwtSettingsService(deps: { repo: JwtSettingsRepository; clock: Clock; onChange: () => void }) {
  const toObject = (row: JwtSettingsRow): JwtSettingsObject => ({
    object: 'jwt_settings',
    organisation_id: row.organisation_id,
    ...parseStoredSettings(row.issuer, row.settings),
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
  });

  return {
    async get(organisationId: string): Promise<JwtSettingsObject> {
      const row = await deps.repo.find(organisationId);
      if (!row) throw notConfigured();
      return toObject(row);
    },

    /** Replaces the settings (an issuer is one organisation's only: 409 otherwise). */
    async put(organisationId: string, settings: JwtSettings): Promise<JwtSettingsObject> {
      if (await deps.repo.issuerTakenBy(settings.issuer, organisationId)) throw issuerTaken();
      const stamp = new Date(deps.clock.now()).toISOString();
      const existing = await deps.repo.find(organisationId);
      const row: JwtSettingsRow = {
        organisation_id: organisationId,
        issuer: settings.issuer,
        settings: storedSettings(settings),
        created_at: existing?.created_at ?? stamp,
        last_updated_at: stamp,
      };
      try {
        await deps.repo.upsert(row);
      } catch (error) {
        if (uniqueViolation(error)) throw issuerTaken();
        throw error;
      }
      deps.onChange();
      return toObject(row);
    },

    /** Turns JWT authentication off by forgetting its settings. */
    async remove(organisationId: string): Promise<void> {
      if (!(await deps.repo.remove(organisationId))) throw notConfigured();
      deps.onChange();
    },
  };
}

export type JwtSettingsService = ReturnType<typeof createJwtSettingsService>;
