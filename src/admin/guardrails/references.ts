import { featureDisabledError, type FeatureFlags } from '../../features/flags.js';
import type { GuardrailUse } from '../../guardrails/store/index.js';
import { AppError } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { GuardrailRepository } from '../../storage/repositories/guardrails.js';

/** Checks the guardrails a saved config (or a workspace's defaults) uses, for the workspace that owns it. */
export type GuardrailUseCheck = (input: {
  organisationId: string;
  workspaceId: string;
  uses: GuardrailUse[];
  /** The request field the paths sit under (`config`, `defaults`; '' for fields at the top of the body). */
  field: string;
}) => Promise<void>;

/**
 * A stored guardrail named by a config must exist, be active, and be usable by the config's
 * workspace: the organisation's or the workspace's own. Another workspace's answers 403
 * WORKSPACE_FORBIDDEN with `param` at the reference, whoever saves it (the config runs in its
 * workspace). With guardrails turned off, nothing may name them.
 */
export function createGuardrailUseCheck(deps: {
  guardrails: GuardrailRepository;
  features: FeatureFlags;
}): GuardrailUseCheck {
  return async ({ organisationId, workspaceId, uses, field }) => {
    const paramOf = (path: string) => (field === '' ? path : `${field}.${path}`);
    if (uses.length > 0 && !deps.features.enabled('guardrails')) {
      const error = featureDisabledError('guardrails');
      throw new AppError(error.code, error.message, { param: paramOf(uses[0]!.path) });
    }
    for (const use of uses) {
      if (use.kind !== 'reference') continue;
      const row = isUuid(use.ref)
        ? await deps.guardrails.findById(organisationId, use.ref.toLowerCase())
        : await deps.guardrails.findBySlug(organisationId, use.ref);
      if (!row || row.status !== 'active')
        throw new AppError('NOT_FOUND', `No active guardrail ${use.ref}.`, { param: paramOf(use.path) });
      if (row.workspace_id !== null && row.workspace_id !== workspaceId)
        throw new AppError(
          'WORKSPACE_FORBIDDEN',
          `Guardrail ${use.ref} belongs to another workspace; a config or workspace default uses its own workspace's guardrails and the organisation's.`,
          {
            param: paramOf(use.path),
          },
        );
      if (use.versionId !== undefined && !(await deps.guardrails.findVersion(row.id, use.versionId)))
        throw new AppError('NOT_FOUND', `Guardrail ${use.ref} has no version ${use.versionId}.`, {
          param: `${paramOf(use.path)}.guardrail_version_id`,
        });
    }
  };
}
