import type { Principal } from '../auth/principal.js';
import type { ServedDeployment } from '../deployments/served-deployment.js';
import { AppError } from '../lib/errors.js';
import type { ConfigSelector, SelectedConfig } from './routing/config-selector.js';

/**
 * Refuses a request the instance's deployment does not serve: one of another organisation, or
 * of a workspace outside the deployment's `allowed_workspaces`. Checked before any limit is
 * counted, so a refused request costs nobody's rate limit.
 */
export function assertDeploymentServes(
  deployment: ServedDeployment,
  principal: Principal,
  workspace: { id: string; slug: string },
): void {
  if (principal.organisationId !== deployment.organisationId)
    throw new AppError(
      'DEPLOYMENT_FORBIDDEN',
      `This gateway instance serves deployment ${deployment.slug} of another organisation.`,
    );
  if (deployment.allowedWorkspaces !== null && !deployment.allowedWorkspaces.has(workspace.id))
    throw new AppError(
      'DEPLOYMENT_FORBIDDEN',
      `Workspace ${workspace.slug} is not served by deployment ${deployment.slug} (this gateway instance's deployment); send its requests to an instance of a deployment that allows it.`,
    );
}

/** The deployment's config, for a request that names none; an archived one is reported against the deployment. */
export async function deploymentConfig(
  configs: ConfigSelector,
  deployment: ServedDeployment,
): Promise<SelectedConfig | null> {
  if (deployment.configId === null) return null;
  try {
    return await configs.selectStored(deployment.organisationId, deployment.configId);
  } catch (error) {
    if (error instanceof AppError && error.code === 'CONFIG_NOT_FOUND')
      throw new AppError(
        'CONFIG_NOT_FOUND',
        `The config of deployment ${deployment.slug} is no longer active; give the deployment another config (PUT /v1/deployments/${deployment.slug}) or name one with x-service-config.`,
      );
    throw error;
  }
}
