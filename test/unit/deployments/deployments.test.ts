import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../src/auth/principal.js';
import { instanceState } from '../../../src/deployments/instance-state.js';
import { servedDeployment } from '../../../src/deployments/served-deployment.js';
import { compareVersions, isOlderThan } from '../../../src/deployments/versions.js';
import { assertDeploymentServes } from '../../../src/gateway/deployment-rules.js';
import { AppError } from '../../../src/lib/errors.js';
import type { DeploymentInstanceRow } from '../../../src/storage/repositories/deployments.js';

describe('gateway versions', () => {
  it('orders major, minor and patch as numbers, a pre-release before its release', () => {
    expect(isOlderThan('0.9.0', '0.10.0')).toBe(true);
    expect(isOlderThan('2.5.0', '2.5.0')).toBe(false);
    expect(isOlderThan('2.4.99', '2.5.0')).toBe(true);
    expect(isOlderThan('3.0.0', '2.5.0')).toBe(false);
    expect(isOlderThan('2.5.0-rc.1', '2.5.0')).toBe(true);
    expect(compareVersions('1.13.0', '1.9.0')).toBeGreaterThan(0);
  });
});

describe('instance state', () => {
  const row = (patch: Partial<DeploymentInstanceRow>): DeploymentInstanceRow => ({
    id: 'i',
    deployment_id: 'd',
    organisation_id: 'o',
    status: 'active',
    version: '0.1.0',
    min_gateway_version: '0.1.0',
    address: null,
    hostname: 'h',
    pid: 1,
    heartbeat_interval_ms: 10_000,
    started_at: '2026-01-01T00:00:00.000Z',
    last_heartbeat_at: '2026-01-01T00:00:00.000Z',
    stopped_at: null,
    refusal_reason: null,
    ...patch,
  });
  const at = (seconds: number) => Date.parse('2026-01-01T00:00:00.000Z') + seconds * 1000;

  it('is gone once silent for more than 3 of its own intervals', () => {
    expect(instanceState(row({}), at(30))).toBe('active');
    expect(instanceState(row({}), at(30.001))).toBe('gone');
    expect(instanceState(row({ heartbeat_interval_ms: 60_000 }), at(179))).toBe('active');
    expect(instanceState(row({ status: 'stopped' }), at(3600))).toBe('stopped');
    expect(instanceState(row({ status: 'refused' }), at(0))).toBe('refused');
  });
});

describe('what a deployment serves', () => {
  const deployment = servedDeployment({
    id: 'd1',
    organisation_id: 'org-1',
    slug: 'alpha',
    name: 'Alpha',
    description: null,
    type: 'production',
    status: 'active',
    config_id: null,
    rate_limits: null,
    usage_limits: null,
    allowed_workspaces: JSON.stringify(['ws-a']),
    created_at: '2026-01-01T00:00:00.000Z',
    last_updated_at: '2026-01-01T00:00:00.000Z',
  });
  const principal = (organisationId: string) => ({ organisationId }) as Principal;
  const refusal = (run: () => void) => {
    try {
      run();
    } catch (error) {
      return error as AppError;
    }
    return null;
  };

  it('serves its allowed workspaces of its own organisation, and refuses the rest by name', () => {
    expect(refusal(() => assertDeploymentServes(deployment, principal('org-1'), { id: 'ws-a', slug: 'a' }))).toBeNull();
    const otherWorkspace = refusal(() =>
      assertDeploymentServes(deployment, principal('org-1'), { id: 'ws-b', slug: 'team-b' }),
    );
    expect(otherWorkspace?.code).toBe('DEPLOYMENT_FORBIDDEN');
    expect(otherWorkspace?.message).toMatch(/^Workspace team-b is not served by deployment alpha/);
    const otherOrganisation = refusal(() =>
      assertDeploymentServes(deployment, principal('org-2'), { id: 'ws-a', slug: 'a' }),
    );
    expect(otherOrganisation?.code).toBe('DEPLOYMENT_FORBIDDEN');
    expect(otherOrganisation?.message).toBe('This gateway instance serves deployment alpha of another organisation.');
    const open = { ...deployment, allowedWorkspaces: null };
    expect(refusal(() => assertDeploymentServes(open, principal('org-1'), { id: 'ws-z', slug: 'z' }))).toBeNull();
    expect(refusal(() => assertDeploymentServes(open, principal('org-2'), { id: 'ws-z', slug: 'z' }))?.code).toBe(
      'DEPLOYMENT_FORBIDDEN',
    );
  });
});
