import { z } from 'zod';
import { ADMIN_ONLY, ORG_ADMINS } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { jwtSettingsBody, jwtSettingsObject } from './schemas.js';
import type { JwtSettingsService } from './service.js';

const TAG = ['Settings'];
const change = { scope: 'organisations.update', keyTypes: ADMIN_ONLY, roles: ORG_ADMINS } as const;

/**
 * JWT authentication is an organisation setting, as in the established gateway's admin
 * settings: reading it needs `organisations.read`; changing it is for owners and admins.
 */
export function registerJwtSettingsRoutes(app: ZodApp, service: JwtSettingsService): void {
  app.get(
    '/v1/settings/jwt',
    {
      schema: {
        tags: TAG,
        summary: "Get the organisation's JWT authentication settings",
        description: '404 when JWT authentication is not configured.',
        response: { 200: jwtSettingsObject },
      },
      config: { auth: { scope: 'organisations.read', keyTypes: ADMIN_ONLY } },
    },
    async (request) => service.get(request.principal!.organisationId),
  );

  app.put(
    '/v1/settings/jwt',
    {
      schema: {
        tags: TAG,
        summary: 'Set up or change JWT authentication',
        description:
          'Replaces the settings: fields left out take their defaults. Tokens of `issuer` are then verified against `jwks_url` (see docs/jwt.md).',
        body: jwtSettingsBody,
        response: { 200: jwtSettingsObject },
      },
      config: { auth: change, audit: { resourceType: 'jwt_settings', action: 'update' } },
    },
    async (request) => {
      const { organisationId } = request.principal!;
      request.auditResourceId = organisationId;
      return service.put(organisationId, request.body);
    },
  );

  app.delete(
    '/v1/settings/jwt',
    {
      schema: {
        tags: TAG,
        summary: 'Turn JWT authentication off',
        description: 'Forgets the settings; every JWT is refused from then on.',
        response: { 200: z.object({}) },
      },
      config: { auth: change, audit: { resourceType: 'jwt_settings', action: 'delete' } },
    },
    async (request) => {
      const { organisationId } = request.principal!;
      request.auditResourceId = organisationId;
      await service.remove(organisationId);
      return {};
    },
  );
}
