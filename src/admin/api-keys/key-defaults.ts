import type { Principal } from '../../auth/principal.js';
import { AppError } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { ConfigRepository } from '../../storage/repositories/configs.js';
import type { KeyDefaultsInput } from './schemas.js';

/**
 * The stored defaults: the config is named by slug or id and kept as its id, after checking it
 * is active and one the key may use (a workspace key: a config of its own workspace).
 */
export async function storedDefaults(
  configs: ConfigRepository,
  principal: Principal,
  keyWorkspaceId: string | null,
  input: KeyDefaultsInput | null | undefined,
): Promise<string | null> {
  if (!input) return null;
  let configId: string | null = null;
  if (input.config_id) {
    const config = isUuid(input.config_id)
      ? await configs.findById(principal.organisationId, input.config_id.toLowerCase())
      : await configs.findActiveBySlug(principal.organisationId, input.config_id);
    if (!config || config.status !== 'active')
      throw new AppError('NOT_FOUND', `No active config ${input.config_id}.`, { param: 'defaults.config_id' });
    if (keyWorkspaceId !== null && config.workspace_id !== keyWorkspaceId)
      throw new AppError('WORKSPACE_FORBIDDEN', 'A workspace key can only default to a config of its own workspace.', {
        param: 'defaults.config_id',
      });
    configId = config.id;
  }
  return JSON.stringify({
    metadata: input.metadata ?? {},
    config_id: configId,
    allow_config_override: input.allow_config_override ?? true,
    allowed_models: input.allowed_models ?? null,
  });
}
