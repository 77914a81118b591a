import { z } from 'zod';
import { BOTH_KEY_TYPES, WORKSPACE_MANAGERS } from '../../http/route-config.js';
import type { ZodApp } from '../../http/zod-app.js';
import { listBody } from '../shared/pagination.js';
import {
  acceptedInvite,
  acceptInviteBody,
  createInviteBody,
  inviteObject,
  inviteParams,
  issuedInvite,
  listInvitesQuery,
  resendInviteBody,
  resentInvite,
} from './schemas.js';
import type { InviteService, IssuedInvite } from './service.js';

const TAG = ['Invites'];
/** Admin keys need the organisation-users scope; workspace keys (managers) the workspace-users one. */
const auth = (verb: string) => ({
  scope: { admin: `organisation_users.${verb}`, workspace: `workspace_users.${verb}` },
  keyTypes: BOTH_KEY_TYPES,
});
/** Inviting needs an owner or admin (admin keys) or a workspace manager or admin (workspace keys). */
const change = (verb: string) => ({ ...auth(verb), roles: WORKSPACE_MANAGERS });
const audit = (action: string) => ({ resourceType: 'invite', action });
const WHO =
  'Owners and admins invite anyone with an admin key; with a workspace key a manager (or workspace admin) invites organisation members into that workspace only, with a role no higher than their own there (403 ROLE_NOT_ALLOWED).';

/** The link carries the token; its base is the address the caller used to reach this server. */
function issued(request: { protocol: string; host: string }, { row, token }: IssuedInvite) {
  const link = `${request.protocol}://${request.host}/v1/invites/accept?token=${encodeURIComponent(token)}`;
  return { object: 'invite' as const, id: row.id, invite_link: link, token, expires_at: row.expires_at };
}

export function registerInviteRoutes(app: ZodApp, service: InviteService): void {
  app.post(
    '/v1/invites',
    {
      schema: {
        tags: TAG,
        summary: 'Invite a user into the organisation',
        description: `The token (also in invite_link) is shown only in this response; the invitee redeems it with POST /v1/invites/accept. ${WHO}`,
        body: createInviteBody,
        response: { 200: issuedInvite },
      },
      config: { auth: change('create'), audit: audit('create') },
    },
    async (request) => {
      const invite = await service.create(request.principal!, request.body);
      request.auditResourceId = invite.row.id;
      return issued(request, invite);
    },
  );

  app.get(
    '/v1/invites',
    {
      schema: {
        tags: TAG,
        summary: 'List invites',
        description: 'A workspace key sees the invites into its workspace.',
        querystring: listInvitesQuery,
        response: { 200: z.object({ object: z.literal('list'), total: z.number(), data: z.array(inviteObject) }) },
      },
      config: { auth: auth('list') },
    },
    async (request) => {
      const { total, data } = await service.list(request.principal!, request.query);
      return listBody(data, total);
    },
  );

  app.post(
    '/v1/invites/accept',
    {
      schema: {
        tags: TAG,
        summary: 'Accept an invite (no API key: the token is the credential)',
        description:
          'Creates the user with the invited role and workspaces and returns their first API key, shown only here. Unknown or replaced token: 400 INVALID_INVITE_TOKEN; used, revoked or expired: 410 INVITE_ALREADY_ACCEPTED, INVITE_REVOKED, INVITE_EXPIRED.',
        security: [],
        body: acceptInviteBody,
        response: { 200: acceptedInvite },
      },
      config: { auth: { public: true }, feature: 'api_access', audit: audit('accept') },
    },
    async (request) => {
      const accepted = await service.accept(request.body);
      // The audit record names the new user and their key as the actor.
      request.principal = accepted.principal;
      request.auditResourceId = accepted.inviteId;
      return { user: accepted.user, api_key: accepted.apiKey, api_key_id: accepted.apiKeyId };
    },
  );

  app.get(
    '/v1/invites/:inviteId',
    {
      schema: { tags: TAG, summary: 'Get an invite', params: inviteParams, response: { 200: inviteObject } },
      config: { auth: auth('read') },
    },
    async (request) => service.get(request.principal!, request.params.inviteId),
  );

  app.post(
    '/v1/invites/:inviteId/resend',
    {
      schema: {
        tags: TAG,
        summary: 'Resend an invite: a new token and a new expiry',
        description: `The previous token stops working. Pending and expired invites only. ${WHO}`,
        params: inviteParams,
        body: resendInviteBody,
        response: { 200: resentInvite },
      },
      config: { auth: change('create'), audit: audit('resend') },
    },
    async (request) => {
      request.auditResourceId = request.params.inviteId;
      const body = issued(request, await service.resend(request.principal!, request.params.inviteId, request.body));
      return { ...body, inviteLink: body.invite_link };
    },
  );

  app.delete(
    '/v1/invites/:inviteId',
    {
      schema: {
        tags: TAG,
        summary: 'Revoke an invite',
        description: 'Its token stops working. Revoking twice is harmless; an accepted invite cannot be revoked (409).',
        params: inviteParams,
        response: { 200: z.object({}) },
      },
      config: { auth: change('delete'), audit: audit('revoke') },
    },
    async (request) => {
      request.auditResourceId = request.params.inviteId;
      await service.revoke(request.principal!, request.params.inviteId);
      return {};
    },
  );
}
