import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { createLoadingCache } from '../../lib/loading-cache.js';
import { AppError, invalid } from '../../lib/errors.js';
import type { Db } from '../../storage/database.js';
import type { SecuritySettingsScope } from '../../storage/schema.js';
import { viewAllowed, writeAllowed, governedRole, type ViewArea, type WriteArea } from './access.js';
import {
  DEFAULT_SECURITY_SETTINGS,
  OVERRIDE_CATEGORIES,
  type OrganisationSettingsBody,
  type OverrideCategory,
  type SecuritySettings,
  type WorkspaceOverrides,
  type WorkspaceOverridesBody,
} from './schemas.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface CheckUserKeyPolicyInput {
  organisationId: string;
  workspaceId: string;
  /** The user the key is for; null skips the cap (a key without a user). */
  userId: string | null;
  /** The requested expiry (ISO 8601); null or undefined when none was given. */
  expiresAt: string | null | undefined;
}

/** Enforces the user-key settings of a workspace on key creation; see checkUserKeyPolicy. */
export type CheckUserKeyPolicy = (input: CheckUserKeyPolicyInput) => Promise<{ expiresAt: string | null }>;

/**
 * Security settings of organisations and their workspaces. `effective` answers from memory
 * (request-log reads ask it every time); changes made here clear the cache at once and call
 * `onChange` (the server tells the other instances); `ttlMs` bounds how long another instance
 * keeps answering with old values when it is not told.
 */
export function createSecuritySettings(deps: { db: Db; clock: Clock; ttlMs?: number; onChange?: () => void }) {
  const ttl = deps.ttlMs ?? 5_000;
  const cache = createLoadingCache<SecuritySettings>({ clock: deps.clock, ttlMs: ttl });
  const nowIso = () => new Date(deps.clock.now()).toISOString();

  const readRow = (scope: SecuritySettingsScope, scopeId: string) =>
    deps.db
      .selectFrom('security_settings')
      .selectAll()
      .where('scope', '=', scope)
      .where('scope_id', '=', scopeId)
      .executeTakeFirst();

  async function writeRow(
    scope: SecuritySettingsScope,
    scopeId: string,
    organisationId: string,
    settings: object,
  ): Promise<void> {
    const stamp = nowIso();
    const json = JSON.stringify(settings);
    await deps.db
      .insertInto('security_settings')
      .values({
        scope,
        scope_id: scopeId,
        organisation_id: organisationId,
        settings: json,
        created_at: stamp,
        last_updated_at: stamp,
      })
      .onConflict((oc) => oc.columns(['scope', 'scope_id']).doUpdateSet({ settings: json, last_updated_at: stamp }))
      .execute();
    cache.clear();
    deps.onChange?.();
  }

  async function organisationValues(organisationId: string) {
    const row = await readRow('organisation', organisationId);
    const stored = row ? (JSON.parse(row.settings) as Partial<SecuritySettings>) : {};
    return { stored, lastUpdatedAt: row?.last_updated_at ?? null };
  }

  async function workspaceValues(organisationId: string, workspaceId: string) {
    const row = await readRow('workspace', workspaceId);
    const overrides =
      row && row.organisation_id === organisationId ? (JSON.parse(row.settings) as WorkspaceOverrides) : {};
    return { overrides, lastUpdatedAt: row && row.organisation_id === organisationId ? row.last_updated_at : null };
  }

  function effective(organisationId: string, workspaceId: string | null): Promise<SecuritySettings> {
    return cache.get(`${organisationId}/${workspaceId ?? ''}`, async () => {
      const org = await organisationValues(organisationId);
      const overrides = workspaceId === null ? {} : (await workspaceValues(organisationId, workspaceId)).overrides;
      return Object.freeze(merge(org.stored, overrides));
    });
  }

  const activeUserKeys = async (input: CheckUserKeyPolicyInput & { userId: string }): Promise<number> => {
    const { n } = await deps.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organisation_id', '=', input.organisationId)
      .where('workspace_id', '=', input.workspaceId)
      .where('user_id', '=', input.userId)
      .where('type', '=', 'workspace-user')
      .where('status', '=', 'active')
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', nowIso())]))
      .executeTakeFirstOrThrow();
    return Number(n);
  };

  /**
   * For the creation of a workspace user key: refuses a user already at the workspace's cap
   * (USER_KEY_LIMIT_REACHED, 409) and an expiry beyond the maximum (INVALID_REQUEST on
   * expires_at, 400); returns the expiry to store: the one given, else the default, else the
   * maximum, else null. The count and the insert are not one transaction, so two concurrent
   * creations can pass a cap of n with n - 1 keys.
   */
  const checkUserKeyPolicy: CheckUserKeyPolicy = async (input) => {
    const settings = await effective(input.organisationId, input.workspaceId);
    const cap = settings.maxUserApiKeysPerWorkspace;
    if (cap !== null && input.userId !== null) {
      const held = await activeUserKeys({ ...input, userId: input.userId });
      if (held >= cap) {
        throw new AppError(
          'USER_KEY_LIMIT_REACHED',
          `The user already holds ${held} active API key${held === 1 ? '' : 's'} in this workspace; maxUserApiKeysPerWorkspace allows ${cap}. Revoke one first.`,
        );
      }
    }
    const now = deps.clock.now();
    const maxDays = settings.userApiKeyMaxExpiryDays;
    if (input.expiresAt === undefined || input.expiresAt === null) {
      const days = settings.userApiKeyDefaultExpiryDays ?? maxDays;
      return { expiresAt: days === null ? null : new Date(now + days * DAY_MS).toISOString() };
    }
    if (maxDays !== null && Date.parse(input.expiresAt) > now + maxDays * DAY_MS) {
      throw invalid(
        'expires_at',
        `expires_at is beyond the maximum lifetime of user API keys in this workspace (userApiKeyMaxExpiryDays ${maxDays}: at the latest ${new Date(now + maxDays * DAY_MS).toISOString()}).`,
      );
    }
    return { expiresAt: input.expiresAt };
  };

  async function organisation(organisationId: string) {
    const { stored, lastUpdatedAt } = await organisationValues(organisationId);
    return { settings: merge(stored, {}), lastUpdatedAt };
  }

  async function workspace(organisationId: string, workspaceId: string) {
    const [org, ws] = await Promise.all([
      organisationValues(organisationId),
      workspaceValues(organisationId, workspaceId),
    ]);
    return { overrides: ws.overrides, settings: merge(org.stored, ws.overrides), lastUpdatedAt: ws.lastUpdatedAt };
  }

  async function canView(principal: Principal, area: ViewArea): Promise<boolean> {
    if (governedRole(principal) === null) return true;
    return viewAllowed(await effective(principal.organisationId, principal.workspaceId), principal, area);
  }

  async function canWrite(principal: Principal, area: WriteArea): Promise<boolean> {
    if (governedRole(principal) === null) return true;
    return writeAllowed(await effective(principal.organisationId, principal.workspaceId), principal, area);
  }

  return {
    effective,
    checkUserKeyPolicy,
    organisation,
    workspace,
    /** Whether the caller's workspace settings let it see `area` (all data, analytics, prompts, configs). */
    canView,
    /** Whether the caller's workspace settings let it create and change things of `area` (prompts, configs). */
    canWrite,

    /** Sets the keys given; the others keep their values. */
    async updateOrganisation(organisationId: string, patch: OrganisationSettingsBody) {
      const { stored } = await organisationValues(organisationId);
      const next = { ...stored, ...(patch as Partial<SecuritySettings>) };
      checkExpiryOrder(layer(next, {}), patch);
      await writeRow('organisation', organisationId, organisationId, next);
      return organisation(organisationId);
    },

    /** Replaces the override of each category given; null (or {}) removes it. */
    async updateWorkspace(organisationId: string, workspaceId: string, body: WorkspaceOverridesBody) {
      const [org, ws] = await Promise.all([
        organisationValues(organisationId),
        workspaceValues(organisationId, workspaceId),
      ]);
      const overrides: WorkspaceOverrides = { ...ws.overrides };
      for (const category of Object.keys(OVERRIDE_CATEGORIES) as OverrideCategory[]) {
        const given = body[category];
        if (given === undefined) continue;
        if (given === null || Object.keys(given).length === 0) delete overrides[category];
        else (overrides as Record<string, object>)[category] = given;
      }
      checkExpiryOrder(layer(org.stored, overrides), body.user_api_keys ?? {});
      await writeRow('workspace', workspaceId, organisationId, overrides);
      return workspace(organisationId, workspaceId);
    },

    /**
     * Data visibility: the user whose own API keys bound what the caller sees (logs, analytics),
     * or null when it sees everything its key reaches.
     */
    async ownDataOnly(principal: Principal): Promise<string | null> {
      // A governed role always comes with a user; were it missing, '' matches no key: nothing is seen.
      return (await canView(principal, 'all_data')) ? null : (principal.userId ?? '');
    },

    invalidate(): void {
      cache.clear();
    },
  };
}

export type SecuritySettingsService = ReturnType<typeof createSecuritySettings>;

/** Organisation values over the defaults, then the workspace's overrides, category by category. */
function layer(organisation: Partial<SecuritySettings>, overrides: WorkspaceOverrides): SecuritySettings {
  const settings: SecuritySettings = { ...DEFAULT_SECURITY_SETTINGS, ...organisation };
  for (const category of Object.keys(OVERRIDE_CATEGORIES) as OverrideCategory[])
    Object.assign(settings, overrides[category] ?? {});
  return settings;
}

/**
 * The settings in effect. A default expiry above the maximum can only be reached through
 * inheritance (requests that set one are refused): the maximum wins.
 */
function merge(organisation: Partial<SecuritySettings>, overrides: WorkspaceOverrides): SecuritySettings {
  const settings = layer(organisation, overrides);
  const { userApiKeyDefaultExpiryDays: byDefault, userApiKeyMaxExpiryDays: max } = settings;
  if (byDefault !== null && max !== null && byDefault > max) settings.userApiKeyDefaultExpiryDays = max;
  return settings;
}

/** A request that makes the default expiry longer than the maximum is refused, naming the key it set. */
function checkExpiryOrder(result: SecuritySettings, given: object): void {
  const { userApiKeyDefaultExpiryDays: byDefault, userApiKeyMaxExpiryDays: max } = result;
  if (byDefault === null || max === null || byDefault <= max) return;
  const param =
    'userApiKeyDefaultExpiryDays' in given
      ? 'userApiKeyDefaultExpiryDays'
      : 'userApiKeyMaxExpiryDays' in given
        ? 'userApiKeyMaxExpiryDays'
        : null;
  if (param)
    throw invalid(
      param,
      `userApiKeyDefaultExpiryDays (${byDefault}) must not exceed userApiKeyMaxExpiryDays (${max}).`,
    );
}
