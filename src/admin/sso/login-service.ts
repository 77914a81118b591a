import type { Principal } from '../../auth/principal.js';
import { DEFAULT_SESSION_TTL_SECONDS } from '../../auth/sessions/session-verifier.js';
import { generateSessionToken, hashSessionToken } from '../../auth/sessions/session-token.js';
import type { SsoIdentity } from '../../auth/sso/identity.js';
import { loopbackRedirectProblem } from '../../auth/sso/loopback.js';
import type { OidcClient } from '../../auth/sso/oidc.js';
import { newSamlRequestId, type SamlServiceProvider } from '../../auth/sso/saml.js';
import type { Clock } from '../../lib/clock.js';
import { digestsEqual, randomToken, sha256Hex } from '../../lib/crypto.js';
import { AppError, invalid, type ErrorCode } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { SessionRepository, SessionRow } from '../../storage/repositories/sessions.js';
import type { SsoLoginRow, SsoRepository } from '../../storage/repositories/sso.js';
import type { UserRepository, UserRow } from '../../storage/repositories/users.js';
import type { WorkspaceRepository } from '../../storage/repositories/workspaces.js';
import type { SsoProtocol } from '../../storage/schema.js';
import type { Provisioner } from './provision.js';
import type { LoginStartQuery, TokenBody } from './schemas.js';
import { callbackPaths, type SsoSettings, type SsoSettingsService } from './settings-service.js';

/** From the redirect to the identity provider to the code exchange: ten minutes. */
const LOGIN_TTL_MS = 10 * 60_000;
/** Ended and abandoned logins are deleted a day after they expire. */
const LOGIN_RETENTION_MS = 86_400_000;
/** Prefix of the one-time code the loopback redirect carries. */
export const LOGIN_CODE_PREFIX = 'svlogin-';
const LOGIN_CODE_RE = /^svlogin-[A-Za-z0-9_-]{43}$/;

export interface IssuedSession {
  token: string;
  session: SessionRow;
  user: UserRow;
  workspaceIds: string[];
  maxSessionTtl: number | null;
  /** Who the audit record of the sign-in names. */
  principal: Principal;
}

/**
 * Signing in with single sign-on, as a native app does it (RFC 8252): the client (svcgw login
 * --sso) listens on a loopback port and opens `start`; svcgw sends the browser to the identity
 * provider (OIDC authorization code with PKCE, or a SAML AuthnRequest), checks its answer,
 * provisions the user, and sends the browser back to the loopback address with a one-time code
 * (never the session itself, which would then sit in browser history). The client exchanges
 * that code, with the PKCE verifier only it knows, for the session token.
 */
export function createLoginService(deps: {
  sso: SsoRepository;
  sessions: SessionRepository;
  users: UserRepository;
  workspaces: WorkspaceRepository;
  settings: SsoSettingsService;
  provisioner: Provisioner;
  oidc: OidcClient;
  saml: SamlServiceProvider;
  secretBox: SecretBox;
  clock: Clock;
  onRefused?: (login: SsoLoginRow, error: AppError) => void;
}) {
  const nowIso = () => new Date(deps.clock.now()).toISOString();

  async function organisation(): Promise<string> {
    const id = await deps.sso.firstOrganisationId();
    if (!id) throw new AppError('SSO_NOT_CONFIGURED', 'This server has no organisation yet.');
    return id;
  }

  function notConfigured(protocol: SsoProtocol): AppError {
    return new AppError(
      'SSO_NOT_CONFIGURED',
      `The organisation has no ${protocol === 'oidc' ? 'OIDC' : 'SAML'} identity provider; an owner or admin sets one with PUT /v1/settings/sso.`,
      { param: 'protocol' },
    );
  }

  /** The loopback address with the outcome: the code, or the error the client shows. */
  function backToClient(login: SsoLoginRow, outcome: { code: string } | { error: AppError }): string {
    const url = new URL(login.redirect_uri);
    if ('code' in outcome) url.searchParams.set('code', outcome.code);
    else {
      url.searchParams.set(
        'error',
        outcome.error.code === 'SSO_PROVIDER_UNAVAILABLE' ? 'temporarily_unavailable' : 'access_denied',
      );
      url.searchParams.set('error_description', outcome.error.message);
      url.searchParams.set('error_code', outcome.error.code);
    }
    if (login.client_state !== null) url.searchParams.set('state', login.client_state);
    return url.toString();
  }

  /** The login an answer names, while it can still be answered once. */
  async function pendingLogin(id: string | undefined, protocol: SsoProtocol): Promise<SsoLoginRow> {
    const login = id ? await deps.sso.findLogin(id) : undefined;
    if (!login || login.protocol !== protocol)
      throw new AppError(
        'SSO_LOGIN_FAILED',
        `The identity provider's answer names no login under way here (unknown ${protocol === 'oidc' ? 'state' : 'RelayState'}); start again with svcgw login --sso.`,
      );
    return login;
  }

  /** After the identity provider vouched for someone: the user, then the one-time code. */
  async function complete(login: SsoLoginRow, settings: SsoSettings, identity: SsoIdentity): Promise<string> {
    const { user } = await deps.provisioner.provision(login.organisation_id, identity, settings.provisioning);
    if (login.workspace !== null && user.role === 'member') {
      const memberships = await deps.sessions.membershipsOf(user.id);
      if (!memberships.some((m) => m.workspace_id === login.workspace))
        throw new AppError('WORKSPACE_FORBIDDEN', `${user.email} is not a member of the workspace asked for.`);
    }
    const code = `${LOGIN_CODE_PREFIX}${randomToken(32)}`;
    const done = await deps.sso.completeLogin(login.id, {
      userId: user.id,
      subject: identity.subject,
      codeHash: sha256Hex(code),
      now: nowIso(),
    });
    if (!done)
      throw new AppError(
        'SSO_LOGIN_FAILED',
        'This login was already answered or has expired; start again with svcgw login --sso.',
      );
    return code;
  }

  /** Runs the answer's checks; a refusal goes back to the client as an error it can show. */
  async function answer(login: SsoLoginRow, check: (settings: SsoSettings) => Promise<SsoIdentity>): Promise<string> {
    try {
      if (login.completed_at !== null || Date.parse(login.expires_at) <= deps.clock.now())
        throw new AppError(
          'SSO_LOGIN_FAILED',
          'This login was already answered or has expired; start again with svcgw login --sso.',
        );
      const settings = await deps.settings.read(login.organisation_id);
      return backToClient(login, { code: await complete(login, settings, await check(settings)) });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      deps.onRefused?.(login, error);
      return backToClient(login, { error });
    }
  }

  return {
    /** The protocol a generic start uses: the one configured, OIDC when both are. */
    async defaultProtocol(): Promise<SsoProtocol> {
      const settings = await deps.settings.read(await organisation());
      if (settings.oidc) return 'oidc';
      if (settings.saml) return 'saml';
      throw new AppError(
        'SSO_NOT_CONFIGURED',
        'The organisation has no identity provider for single sign-on; an owner or admin sets one with PUT /v1/settings/sso.',
      );
    },

    /** Records the login and returns the identity provider's URL to send the browser to. */
    async start(protocol: SsoProtocol, query: LoginStartQuery, base: string): Promise<string> {
      const problem = loopbackRedirectProblem(query.redirect_uri);
      if (problem) throw invalid('redirect_uri', problem);
      const organisationId = await organisation();
      const settings = await deps.settings.read(organisationId);
      let workspace: string | null = null;
      if (query.workspace !== undefined) {
        const found = await deps.workspaces.findByIdOrSlug(organisationId, query.workspace);
        if (!found || found.status !== 'active')
          throw new AppError('NOT_FOUND', `Workspace ${query.workspace} not found.`, { param: 'workspace' });
        workspace = found.id;
      }
      const now = deps.clock.now();
      const login: SsoLoginRow = {
        id: randomToken(32),
        organisation_id: organisationId,
        protocol,
        redirect_uri: query.redirect_uri,
        client_state: query.state ?? null,
        code_challenge: query.code_challenge,
        workspace,
        callback_url: `${base}${callbackPaths[protocol]}`,
        oidc_code_verifier: null,
        oidc_nonce: null,
        saml_request_id: null,
        user_id: null,
        subject: null,
        code_hash: null,
        completed_at: null,
        consumed_at: null,
        created_at: new Date(now).toISOString(),
        expires_at: new Date(now + LOGIN_TTL_MS).toISOString(),
      };
      let url: string;
      if (protocol === 'oidc') {
        if (!settings.oidc) throw notConfigured('oidc');
        const codeVerifier = randomToken(32);
        const nonce = randomToken(16);
        url = await deps.oidc.authorizationUrl(settings.oidc, deps.settings.clientSecret(settings), {
          redirectUri: login.callback_url,
          state: login.id,
          nonce,
          codeVerifier,
        });
        login.oidc_code_verifier = deps.secretBox.encrypt(codeVerifier);
        login.oidc_nonce = nonce;
      } else {
        if (!settings.saml) throw notConfigured('saml');
        const request = { id: newSamlRequestId(), issuedAt: login.created_at };
        url = await deps.saml.authorizeUrl(settings.saml, login.callback_url, request, login.id);
        login.saml_request_id = request.id;
      }
      await deps.sso.purgeLogins(new Date(now - LOGIN_RETENTION_MS).toISOString());
      await deps.sso.insertLogin(login);
      return url;
    },

    /** The OIDC provider's redirect: the code exchange, then back to the client. */
    async oidcCallback(query: Record<string, unknown>): Promise<string> {
      const login = await pendingLogin(typeof query.state === 'string' ? query.state : undefined, 'oidc');
      return answer(login, async (settings) => {
        if (!settings.oidc) throw notConfigured('oidc');
        const params = new URLSearchParams();
        for (const [name, value] of Object.entries(query)) if (typeof value === 'string') params.append(name, value);
        return deps.oidc.exchange(settings.oidc, deps.settings.clientSecret(settings), {
          redirectUri: login.callback_url,
          query: params,
          state: login.id,
          nonce: login.oidc_nonce!,
          codeVerifier: deps.secretBox.decrypt(login.oidc_code_verifier!),
        });
      });
    },

    /** The SAML response posted to the assertion consumer service, then back to the client. */
    async samlAcs(posted: { SAMLResponse: string; RelayState: string }): Promise<string> {
      const login = await pendingLogin(posted.RelayState, 'saml');
      return answer(login, async (settings) => {
        if (!settings.saml) throw notConfigured('saml');
        const request = { id: login.saml_request_id!, issuedAt: login.created_at };
        return deps.saml.validate(settings.saml, login.callback_url, request, {
          SAMLResponse: posted.SAMLResponse,
          RelayState: posted.RelayState,
        });
      });
    },

    /** This server's SAML service provider metadata. */
    async samlMetadata(base: string): Promise<string> {
      const settings = await deps.settings.read(await organisation());
      if (!settings.saml) throw notConfigured('saml');
      return deps.saml.metadata(settings.saml, `${base}${callbackPaths.saml}`);
    },

    /** The client's exchange of the one-time code (with its PKCE verifier) for a session. */
    async exchange(body: TokenBody, client: { userAgent: string | null; ip: string | null }): Promise<IssuedSession> {
      const refuse = (message: string, code: ErrorCode = 'INVALID_LOGIN_CODE') =>
        new AppError(code, message, { param: 'code' });
      if (!LOGIN_CODE_RE.test(body.code)) throw refuse('The login code is malformed.');
      const hash = sha256Hex(body.code);
      const login = await deps.sso.findLoginByCode(hash);
      if (!login || login.code_hash === null || !digestsEqual(login.code_hash, hash))
        throw refuse('The login code is not valid.');
      if (login.consumed_at !== null) throw refuse('The login code was already used; it works once.');
      const now = deps.clock.now();
      if (Date.parse(login.expires_at) <= now) throw refuse('The login code has expired; start again.');
      const challenge = Buffer.from(login.code_challenge, 'base64url').toString('hex');
      if (!digestsEqual(sha256Hex(body.code_verifier), challenge))
        throw new AppError('INVALID_LOGIN_CODE', 'The code_verifier does not match the code_challenge of the login.', {
          param: 'code_verifier',
        });
      if (!(await deps.sso.consumeLogin(login.id, new Date(now).toISOString())))
        throw refuse('The login code was already used; it works once.');
      const user = login.user_id ? await deps.users.findById(login.organisation_id, login.user_id) : undefined;
      if (!user) throw refuse('The user of this login no longer exists.');

      const maxSessionTtl = (await deps.sso.findSettings(login.organisation_id))?.max_session_ttl ?? null;
      const admin = user.role === 'owner' || user.role === 'admin';
      const workspaceIds = (await deps.sessions.membershipsOf(user.id)).map((m) => m.workspace_id);
      // A member's session acts in one workspace, fixed now: the one asked for, else their oldest.
      const workspaceId = admin ? null : (login.workspace ?? workspaceIds[0] ?? null);
      const token = generateSessionToken();
      const session: SessionRow = {
        id: newId(),
        organisation_id: login.organisation_id,
        user_id: user.id,
        token_hash: hashSessionToken(token),
        workspace_id: workspaceId,
        identity_provider: login.protocol,
        subject: login.subject,
        client: client.userAgent?.slice(0, 255) ?? null,
        client_ip: client.ip,
        created_at: new Date(now).toISOString(),
        expires_at: new Date(now + (maxSessionTtl ?? DEFAULT_SESSION_TTL_SECONDS) * 1000).toISOString(),
        last_used_at: null,
        revoked_at: null,
        end_reason: null,
      };
      await deps.sessions.insert(session);
      return {
        token,
        session,
        user,
        workspaceIds,
        maxSessionTtl,
        principal: {
          authMethod: 'session',
          keyId: session.id,
          keyType: admin ? 'organisation-service' : 'workspace-user',
          organisationId: session.organisation_id,
          workspaceId,
          userId: user.id,
          orgRole: user.role,
          workspaceRole: null,
          scopes: new Set(),
          rateLimits: null,
          usageLimits: null,
          keyCreatedAt: session.created_at,
          keyName: `Session of ${user.email}`,
          defaults: null,
        },
      };
    },
  };
}

export type LoginService = ReturnType<typeof createLoginService>;
