import { z } from 'zod';
import { JWT_ALGORITHMS, jwtSettingsInput } from '../../auth/jwt/settings.js';

/** `PUT /v1/settings/jwt`: the whole settings; fields left out take their defaults. */
export const jwtSettingsBody = jwtSettingsInput;

const claimList = z.array(z.string());

export const jwtSettingsObject = z.object({
  object: z.literal('jwt_settings'),
  organisation_id: z.string(),
  enabled: z.boolean(),
  jwks_url: z.string(),
  issuer: z.string(),
  audience: z.array(z.string()).nullable(),
  algorithms: z.array(z.enum(JWT_ALGORITHMS)),
  clock_tolerance_seconds: z.number(),
  jwks_cache_seconds: z.number(),
  require_known_user: z.boolean(),
  claims: z.object({
    user: claimList,
    email: claimList,
    workspace: claimList,
    scopes: claimList,
    organisation: claimList,
  }),
  created_at: z.string(),
  last_updated_at: z.string(),
});
export type JwtSettingsObject = z.infer<typeof jwtSettingsObject>;
