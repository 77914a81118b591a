import { ADMIN_ONLY, ORG_ADMINS } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import type { PublicBase } from './login-routes.js';
import { ssoSettingsBody, ssoSettingsObject } from './schemas.js';
import type { SsoSettingsService } from './settings-service.js';

const TAG = ['Settings'];

/** The organisation's identity providers: read with a read scope, changed by owners and admins. */
export function registerSsoSettingsRoutes(app: ZodApp, deps: { settings: SsoSettingsService; base: PublicBase }): void {
  app.get(
    '/v1/settings/sso',
    {
      schema: {
        tags: TAG,
        summary: "Get the organisation's single sign-on settings",
        description:
          'The identity providers (the OIDC client secret is never returned, only whether one is set), the URLs to register at them, and how first-time users are provisioned.',
        response: { 200: ssoSettingsObject },
      },
      config: { auth: { scope: 'organisations.read', keyTypes: ADMIN_ONLY } },
    },
    async (request) => {
      const { organisationId } = request.principal!;
      return deps.settings.toObject(await deps.settings.read(organisationId), deps.base(request));
    },
  );

  app.put(
    '/v1/settings/sso',
    {
      schema: {
        tags: TAG,
        summary: "Change the organisation's single sign-on settings",
        description:
          'oidc and saml given replace their section (null removes it; left out keeps it); provisioning settings given replace theirs. The client secret is encrypted at rest and redacted from the audit record.',
        body: ssoSettingsBody,
        response: { 200: ssoSettingsObject },
      },
      config: {
        auth: { scope: 'organisations.update', keyTypes: ADMIN_ONLY, roles: ORG_ADMINS },
        audit: { resourceType: 'sso_settings', action: 'update' },
      },
    },
    async (request) => {
      const { organisationId } = request.principal!;
      request.auditResourceId = organisationId;
      return deps.settings.update(organisationId, request.body, deps.base(request));
    },
  );
}
