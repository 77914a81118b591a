import { describe, expect, it } from 'vitest';
import { parseApplyFile } from '../../../src/cli/apply/load.js';
import { planApply, PlanError, type CurrentState } from '../../../src/cli/apply/plan.js';

const WS = { id: 'w-default', slug: 'default', is_default: true, name: 'Default workspace' };
const TEAM = { id: 'w-a', slug: 'team-a', name: 'Team A' };
const state = (over: Partial<CurrentState> = {}): CurrentState => ({
  workspaces: [WS, TEAM],
  integrations: [],
  providers: [],
  rateLimits: [],
  usageLimits: [],
  apiKeys: [],
  ...over,
});
const FILE = `
deployments:
  - slug: eu-production
    name: EU production
    type: production
    config: eu-routing
    allowed_workspaces: [team-a, default]
    rate_limits: [{ type: requests, unit: rpm, value: 6000 }]
`;
const SHOWN = {
  id: 'd-1',
  slug: 'eu-production',
  name: 'EU production',
  type: 'production',
  description: null,
  config_id: 'c-1',
  config_slug: 'eu-routing',
  allowed_workspaces: [
    { id: 'w-default', slug: 'default' },
    { id: 'w-a', slug: 'team-a' },
  ],
  rate_limits: [{ type: 'requests', unit: 'rpm', value: 6000 }],
  usage_limits: null,
};

describe('apply: deployments', () => {
  it('creates a deployment by slug, naming its config and workspaces by slug', () => {
    const steps = planApply(parseApplyFile(FILE, 'f.yaml', {}), state());
    expect(steps).toEqual([
      {
        kind: 'deployment',
        name: 'eu-production',
        action: 'create',
        changes: ['name', 'type', 'config_id', 'allowed_workspaces', 'rate_limits'],
        request: {
          method: 'POST',
          path: '/v1/deployments',
          body: {
            slug: 'eu-production',
            name: 'EU production',
            type: 'production',
            config_id: 'eu-routing',
            allowed_workspaces: ['team-a', 'default'],
            rate_limits: [{ type: 'requests', unit: 'rpm', value: 6000 }],
          },
        },
      },
    ]);
  });

  it('leaves a matching deployment alone (workspaces in any order) and updates only what differs', () => {
    const file = parseApplyFile(FILE, 'f.yaml', {});
    expect(planApply(file, state({ deployments: [SHOWN] }))[0]).toMatchObject({ action: 'unchanged' });
    const changed = planApply(
      parseApplyFile(FILE.replace('[team-a, default]', 'null').replace('eu-routing', 'us-routing'), 'f.yaml', {}),
      state({ deployments: [SHOWN] }),
    )[0]!;
    expect(changed).toMatchObject({
      action: 'update',
      changes: ['config_id', 'allowed_workspaces'],
      request: {
        method: 'PUT',
        path: '/v1/deployments/eu-production',
        body: { config_id: 'us-routing', allowed_workspaces: null },
      },
    });
  });

  it('refuses a workspace that neither exists nor is in the file, and a slug named twice', () => {
    expect(() => planApply(parseApplyFile(FILE.replace('team-a,', 'team-z,'), 'f.yaml', {}), state())).toThrow(
      PlanError,
    );
    expect(() => parseApplyFile(`${FILE}${FILE.replace('deployments:\n', '')}`, 'f.yaml', {})).toThrow(
      /deployments names eu-production twice/,
    );
    expect(() => parseApplyFile(FILE.replace('type: production', 'type: staging'), 'f.yaml', {})).toThrow(/type/);
  });
});
