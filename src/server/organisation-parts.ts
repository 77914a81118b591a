import { lazyService } from '../lib/lazy.js';
import { registerApiKeyRoutes } from '../admin/api-keys/routes.js';
import type { GuardrailUseCheck } from '../admin/guardrails/references.js';
import { registerInvites } from '../admin/invites/index.js';
import { registerMembers } from '../admin/members/index.js';
import { registerRateLimitPolicyRoutes } from '../admin/rate-limits-policies/routes.js';
import { registerScim } from '../admin/scim/index.js';
import type { SecuritySettingsService } from '../admin/settings/security-settings.js';
import { registerSso } from '../admin/sso/index.js';
import { registerUsers } from '../admin/users/index.js';
import { registerWorkspaceRoutes } from '../admin/workspaces/routes.js';
import type { ApiKeyVerifier } from '../auth/api-key-service.js';
import { createUserStatusEvents, type UserStatusEvents } from '../auth/user-status.js';
import type { Config } from '../config/schema.js';
import type { ZodApp } from '../http/zod-app.js';
import type { Clock } from '../lib/clock.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { RotationWriter } from '../secrets/rotation-writer.js';
import type { Repositories } from '../storage/repositories/index.js';
import type { Logger } from '../telemetry/logger.js';
import { registerScimProtocol } from './plugins/scim-protocol.js';

/**
 * The organisation's people and keys: API keys, workspaces and their members, users, invites,
 * rate-limit policies, SCIM provisioning and single sign-on.
 */
export async function registerOrganisationAdmin(
  zapp: ZodApp,
  deps: {
    config: Config;
    clock: Clock;
    logger: Logger;
    repos: Repositories;
    keys: ApiKeyVerifier;
    secretBox: SecretBox;
    securitySettings: SecuritySettingsService;
    rotationWriter: RotationWriter;
    checkGuardrails: GuardrailUseCheck;
    onGuardrailDefaultsChange: () => void;
  },
): Promise<{ userStatus: UserStatusEvents }> {
  const { repos, keys, securitySettings, rotationWriter, checkGuardrails, secretBox } = deps;
  const services = {
    apiKeys: lazyService(async () =>
      (await import('../admin/api-keys/service.js')).createApiKeyAdminService({
        keys: repos.apiKeys,
        configs: repos.configs,
        workspaces: repos.workspaces,
        usage: repos.usageCounters,
        verifier: keys,
        clock: deps.clock,
        checkUserKeyPolicy: securitySettings.checkUserKeyPolicy,
        secretReferences: repos.secretReferences,
        rotationWriter,
      }),
    ),
    workspaces: lazyService(async () =>
      (await import('../admin/workspaces/service.js')).createWorkspaceService({
        workspaces: repos.workspaces,
        members: repos.members,
        users: repos.users,
        usage: repos.usageCounters,
        clock: deps.clock,
        verifier: keys,
        checkGuardrails,
        onDefaultsChange: () => deps.onGuardrailDefaultsChange(),
      }),
    ),
    rateLimitPolicies: lazyService(async () =>
      (await import('../admin/rate-limits-policies/service.js')).createRateLimitPolicyService({
        policies: repos.rateLimitPolicies,
        workspaces: repos.workspaces,
        apiKeys: repos.apiKeys,
        clock: deps.clock,
      }),
    ),
  };
  registerApiKeyRoutes(zapp, services.apiKeys);
  registerWorkspaceRoutes(zapp, services.workspaces);
  registerMembers(zapp, { repos: deps.repos, keys: deps.keys, clock: deps.clock });
  registerUsers(zapp, { repos: deps.repos, keys: deps.keys, clock: deps.clock });
  registerInvites(zapp, { repos: deps.repos, keys: deps.keys, clock: deps.clock });
  const userStatus = createUserStatusEvents();
  const scim = registerScim(zapp, {
    repos,
    keys,
    clock: deps.clock,
    userStatus,
    userMode: deps.config.scim_membership_user_mode,
  });
  await zapp.register(async (scope) => {
    registerScimProtocol(scope);
    scim.registerProtocolRoutes(scope);
  });
  await registerSso(zapp, {
    repos,
    secretBox,
    clock: deps.clock,
    logger: deps.logger,
    publicUrl: deps.config.public_url,
    customScopes: deps.config.oidc_custom_scopes
      .split(',')
      .map((scope) => scope.trim())
      .filter(Boolean),
  });
  registerRateLimitPolicyRoutes(zapp, services.rateLimitPolicies);
  return { userStatus };
}
