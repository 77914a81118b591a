import { describe, expect, it } from 'vitest';
import { APPLY_FILE_EXAMPLE } from '../../../src/cli/commands/apply.js';
import { parseApplyFile } from '../../../src/cli/apply/load.js';
import { planApply, summarise, type CurrentState } from '../../../src/cli/apply/plan.js';
import { FatalError } from '../../../src/cli/fatal-error.js';

const WS = {
  id: 'w-default',
  slug: 'default',
  is_default: true,
  name: 'Default workspace',
  description: null,
  usage_limits: null,
};
const empty = (over: Partial<CurrentState> = {}): CurrentState => ({
  workspaces: [WS],
  integrations: [],
  providers: [],
  rateLimits: [],
  usageLimits: [],
  apiKeys: [],
  ...over,
});

function usageError(fn: () => unknown): FatalError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(FatalError);
    expect((error as FatalError).exitCode).toBe(2);
    return error as FatalError;
  }
  throw new Error('expected a usage error');
}

describe('apply file', () => {
  it('parses the example shown in --help, taking ${VAR} from the environment', () => {
    const file = parseApplyFile(APPLY_FILE_EXAMPLE, 'example.yaml', { OPENAI_API_KEY: 'sk-example-0123456789' });
    expect(file.integrations[0]!.key).toBe('sk-example-0123456789');
    expect(file.api_keys[0]).toMatchObject({ type: 'workspace-service', scopes: ['completions.write', 'logs.list'] });
    expect(file.policies.rate_limits[0]!.unit).toBe('rpm');
  });

  it('accepts JSON, and refuses unknown fields, missing variables and duplicates as usage errors', () => {
    expect(parseApplyFile('{"workspaces": [{"slug": "a", "name": "A"}]}', 'f.json', {}).workspaces).toHaveLength(1);
    expect(
      usageError(() => parseApplyFile('workspaces: [{slug: a, name: A, colour: red}]', 'f.yaml', {})).message,
    ).toMatch(/workspaces\.0.*colour/);
    expect(
      usageError(() =>
        parseApplyFile('integrations: [{slug: a, name: A, ai_provider_id: openai, key: "${NOPE}"}]', 'f.yaml', {}),
      ).message,
    ).toMatch(/NOPE/);
    expect(
      usageError(() => parseApplyFile('workspaces: [{slug: a, name: A}, {slug: a, name: B}]', 'f.yaml', {})).message,
    ).toMatch(/twice/);
    expect(usageError(() => parseApplyFile('workspaces: [{slug: a', 'f.yaml', {})).message).toMatch(/not valid YAML/);
  });
});

describe('planApply', () => {
  const file = parseApplyFile(APPLY_FILE_EXAMPLE, 'example.yaml', { OPENAI_API_KEY: 'sk-example-0123456789' });

  it('creates everything on an empty server, in dependency order, with slugs as references', () => {
    const steps = planApply(file, empty());
    expect(steps.map((s) => [s.kind, s.action])).toEqual([
      ['workspace', 'create'],
      ['integration', 'create'],
      ['provider', 'create'],
      ['rate_limits_policy', 'create'],
      ['usage_limits_policy', 'create'],
      ['api_key', 'create'],
    ]);
    expect(steps[1]!.request!.body).toMatchObject({ slug: 'openai-main', create_default_provider: false });
    expect(steps[2]!.request!.body).toMatchObject({ integration_id: 'openai-main', workspace_id: 'team-a' });
  });

  it('leaves alone what matches, comparing secrets by their masks and objects by what the file says', () => {
    const current = empty({
      workspaces: [
        WS,
        {
          id: 'w-a',
          slug: 'team-a',
          name: 'Team A',
          description: null,
          usage_limits: {
            credit_limit: 100,
            periodic_reset: 'monthly',
            type: 'cost',
            next_usage_reset_at: '2026-02-01T00:00:00.000Z',
          },
        },
      ],
      integrations: [
        {
          id: 'i-1',
          slug: 'openai-main',
          name: 'OpenAI',
          ai_provider_id: 'openai',
          masked_key: 'sk-e****6789',
          tags: { env: 'prod' },
          configurations: {},
        },
      ],
      providers: [
        {
          id: 'p-1',
          slug: 'openai',
          name: 'OpenAI for team A',
          workspace_id: 'w-a',
          integration_id: 'i-1',
          note: null,
          tags: {},
        },
      ],
      rateLimits: [
        {
          id: 'r-1',
          name: 'chat rpm',
          workspace_id: 'w-a',
          conditions: [{ key: 'endpoint_type', value: 'chatComplete' }],
          group_by: [{ key: 'api_key' }],
          type: 'requests',
          unit: 'rpm',
          value: 100,
        },
      ],
      usageLimits: [
        {
          id: 'u-1',
          name: 'monthly budget',
          workspace_id: 'w-a',
          conditions: [{ key: 'workspace_id', value: 'team-a' }],
          group_by: [{ key: 'api_key' }],
          type: 'cost',
          credit_limit: 50,
          alert_threshold: 40,
          periodic_reset: 'monthly',
          periodic_reset_days: null,
        },
      ],
      apiKeys: [
        {
          id: 'k-1',
          name: 'ci',
          type: 'workspace-service',
          status: 'active',
          workspace_id: 'w-a',
          scopes: ['logs.list', 'completions.write'],
          description: null,
          expires_at: null,
        },
      ],
    });
    const steps = planApply(file, current);
    expect(steps.every((s) => s.action === 'unchanged')).toBe(true);
    expect(summarise(steps)).toEqual({ create: 0, update: 0, unchanged: 6 });

    const changed = planApply(
      parseApplyFile(APPLY_FILE_EXAMPLE.replace('value: 100 }', 'value: 200 }'), 'f', {
        OPENAI_API_KEY: 'sk-other-key-000000000',
      }),
      current,
    );
    expect(changed.find((s) => s.kind === 'integration')).toMatchObject({
      action: 'update',
      changes: ['key'],
      request: { method: 'PUT', path: '/v1/integrations/openai-main', body: { key: 'sk-other-key-000000000' } },
    });
    expect(changed.find((s) => s.kind === 'rate_limits_policy')).toMatchObject({
      action: 'update',
      changes: ['value'],
      request: { path: '/v1/policies/rate-limits/r-1', body: { value: 200 } },
    });
  });

  it('refuses what it cannot do: unknown references and fields that cannot change', () => {
    const broken = parseApplyFile('providers: [{slug: p, name: P, integration: missing, workspace: nowhere}]', 'f', {});
    expect(() => planApply(broken, empty())).toThrow(
      /workspace nowhere does not exist[\s\S]*integration missing does not exist/,
    );
    const retype = parseApplyFile('integrations: [{slug: x, name: X, ai_provider_id: anthropic}]', 'f', {});
    expect(() =>
      planApply(retype, empty({ integrations: [{ id: 'i', slug: 'x', name: 'X', ai_provider_id: 'openai' }] })),
    ).toThrow(/cannot change/);
    const archived = parseApplyFile('workspaces: [{slug: old, name: Old}]', 'f', {});
    expect(() =>
      planApply(archived, empty({ workspaces: [WS, { id: 'w-old', slug: 'old', name: 'Old', status: 'archived' }] })),
    ).toThrow(/archived; unarchive it first/);
  });
});
