import { z } from 'zod';
import { ADMIN_ONLY, BOTH_KEY_TYPES, ORG_ADMINS } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { listBody } from '../shared/pagination.js';
import {
  listSessionsQuery,
  sessionObject,
  sessionParams,
  sessionSettingsBody,
  sessionSettingsObject,
} from './schemas.js';
import type { SessionService } from './service.js';

const TAG = ['Sessions'];
/** Sessions are part of managing users: organisation owners and admins, with admin keys or their own sessions. */
const auth = (verb: string) => ({ scope: `organisation_users.${verb}`, keyTypes: ADMIN_ONLY, roles: ORG_ADMINS });
const audit = (action: string) => ({ resourceType: 'session', action });

export function registerSessionRoutes(app: ZodApp, service: SessionService): void {
  app.get(
    '/v1/sessions',
    {
      schema: {
        tags: TAG,
        summary: 'List sessions (single sign-on), newest first',
        description: 'Organisation owners and admins. The token of a session is never shown again after sign-in.',
        querystring: listSessionsQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(sessionObject) }) },
      },
      config: { auth: auth('list') },
    },
    async (request) => {
      const { total, data } = await service.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.post(
    '/v1/sessions/logout',
    {
      schema: {
        tags: TAG,
        summary: 'End the calling session (log out)',
        description:
          'Called with the session token itself; the token stops working at once. An API key cannot log out (400).',
        response: { 200: sessionObject },
      },
      config: { auth: { scope: null, keyTypes: BOTH_KEY_TYPES }, audit: audit('logout') },
    },
    async (request) => {
      const principal = request.principal!;
      request.auditResourceId = principal.keyId;
      return service.logout(principal);
    },
  );

  app.get(
    '/v1/sessions/:sessionId',
    {
      schema: { tags: TAG, summary: 'Get a session', params: sessionParams, response: { 200: sessionObject } },
      config: { auth: auth('read') },
    },
    async (request) => service.get(request.principal!, request.params.sessionId),
  );

  app.delete(
    '/v1/sessions/:sessionId',
    {
      schema: {
        tags: TAG,
        summary: 'Revoke a session',
        description: 'Its token stops working at once, on every instance. Revoking twice is harmless.',
        params: sessionParams,
        response: { 200: sessionObject },
      },
      config: { auth: auth('update'), audit: audit('revoke') },
    },
    async (request) => {
      request.auditResourceId = request.params.sessionId;
      return service.revoke(request.principal!, request.params.sessionId);
    },
  );

  app.get(
    '/v1/settings/sessions',
    {
      schema: {
        tags: ['Settings'],
        summary: "Get the organisation's session settings",
        response: { 200: sessionSettingsObject },
      },
      config: { auth: { scope: 'organisations.read', keyTypes: ADMIN_ONLY } },
    },
    async (request) => service.settings(request.principal!.organisationId),
  );

  app.put(
    '/v1/settings/sessions',
    {
      schema: {
        tags: ['Settings'],
        summary: "Change the organisation's session settings (session_settings.max_session_ttl)",
        description:
          'max_session_ttl is in seconds, at least 900; sessions older than it are refused with 401 SESSION_EXPIRED, those opened before the change included.',
        body: sessionSettingsBody,
        response: { 200: sessionSettingsObject },
      },
      config: {
        auth: { scope: 'organisations.update', keyTypes: ADMIN_ONLY, roles: ORG_ADMINS },
        audit: { resourceType: 'session_settings', action: 'update' },
      },
    },
    async (request) => {
      const { organisationId } = request.principal!;
      request.auditResourceId = organisationId;
      return service.updateSettings(organisationId, request.body);
    },
  );
}
