import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliAgainstServer } from '../helpers/cli.js';
import { makeTempDir, startTestServer } from '../helpers/start-test-server.js';

describe('svcgw deployments', () => {
  it('creates, lists by type, shows with instances, updates and deletes deployments', { timeout: 90_000 }, async () => {
    const { ok, cli, fails, server, api } = await cliAgainstServer();
    await api.post('/v1/workspaces', { name: 'Team A', slug: 'team-a' });
    const file = join(makeTempDir(), 'eu.json');
    writeFileSync(file, JSON.stringify({ provider: 'openai', custom_host: 'http://127.0.0.1:9/v1' }));
    await ok(['configs', 'create', '--name', 'EU', '--slug', 'eu-routing', '-f', file]);

    const created = await ok([
      'deployments',
      'create',
      '--name',
      'EU production',
      '--slug',
      'eu-prod',
      '--type',
      'production',
      '--config',
      'eu-routing',
      '--workspaces',
      'team-a,default',
      '--rate-limit',
      'requests:rpm:600',
      '--rate-limit',
      'tokens:rph:100000',
      '--data',
      JSON.stringify({ usage_limits: { credit_limit: 100, periodic_reset: 'monthly' } }),
    ]);
    expect(created).toMatchObject({ slug: 'eu-prod', object: 'deployment' });
    await ok(['deployments', 'create', '--name', 'Staging', '--slug', 'staging', '--type', 'non-production']);
    const text = await cli(['deployments', 'create', '--name', 'Dev', '--slug', 'dev', '--type', 'non-production']);
    expect(text.stdout).toContain('Start its instances with: svcgw serve --deployment dev');

    const production = await ok(['deployments', 'list', '--type', 'production']);
    expect(production.data.map((d: any) => d.slug)).toEqual(['eu-prod']);
    expect(production.data[0]).toMatchObject({
      config_slug: 'eu-routing',
      rate_limits: [
        { type: 'requests', unit: 'rpm', value: 600 },
        { type: 'tokens', unit: 'rph', value: 100000 },
      ],
      allowed_workspaces: [{ slug: 'team-a' }, { slug: 'default' }],
    });
    const table = await cli(['deployments', 'list', '--type', 'non-production']);
    expect(table.stdout).toMatch(/staging\s+Staging\s+non-production/);
    expect(table.stdout).not.toContain('eu-prod');

    // An instance joins: `get` shows it.
    const instance = await startTestServer({ dataDir: server.dataDir, env: { SVCGW_DEPLOYMENT: 'eu-prod' } });
    const shown = await ok(['deployments', 'get', 'eu-prod']);
    expect(shown.instances).toHaveLength(1);
    expect(shown.instances[0]).toMatchObject({ status: 'active', address: instance.baseUrl });
    const details = await cli(['deployments', 'get', 'eu-prod']);
    expect(details.stdout).toMatch(/^type\s+production$/m);
    expect(details.stdout).toMatch(new RegExp(`instances:\\n.*\\nactive\\s+0\\.1\\.0\\s+${instance.baseUrl}`));
    await fails(['deployments', 'delete', 'eu-prod', '--yes'], 1, /has 1 live instance/);
    await instance.close();

    await ok([
      'deployments',
      'update',
      'eu-prod',
      '--no-config',
      '--all-workspaces',
      '--no-rate-limits',
      '--type',
      'non-production',
    ]);
    expect(await ok(['deployments', 'get', 'eu-prod'])).toMatchObject({
      type: 'non-production',
      config_id: null,
      allowed_workspaces: null,
      rate_limits: null,
    });
    await fails(
      ['deployments', 'update', 'eu-prod', '--rate-limit', 'requests:per-minute:5'],
      2,
      /expected <requests\|tokens>/,
    );
    await fails(
      ['deployments', 'create', '--name', 'X', '--type', 'staging'],
      2,
      /Allowed choices are production, non-production/,
    );
    await fails(['deployments', 'delete', 'staging'], 2, /pass --yes/);
    await ok(['deployments', 'delete', 'staging', '--yes']);
    expect((await ok(['deployments', 'list'])).data.map((d: any) => d.slug)).toEqual(['eu-prod', 'dev']);
    await fails(['deployments', 'get', 'staging-2'], 1, /Deployment not found/);
  });
});

describe('svcgw apply: deployments', () => {
  it(
    'creates a deployment from a file, leaves it alone on a second apply, and updates what changed',
    { timeout: 90_000 },
    async () => {
      const { ok, api } = await cliAgainstServer();
      const path = join(makeTempDir(), 'svcgw.yaml');
      const file = (workspaces: string) => `
workspaces:
  - { slug: team-a, name: Team A }
configs:
  - { slug: eu-routing, name: EU, config: { provider: openai, custom_host: "http://127.0.0.1:9/v1" } }
deployments:
  - slug: eu-production
    name: EU production
    type: production
    config: eu-routing
    allowed_workspaces: ${workspaces}
    rate_limits: [{ type: requests, unit: rpm, value: 6000 }]
`;
      writeFileSync(path, file('[team-a]'));
      expect((await ok(['apply', '-f', path])).summary).toMatchObject({ create: 3 });
      const created = (await api.get('/v1/deployments/eu-production')).body;
      expect(created).toMatchObject({
        type: 'production',
        config_slug: 'eu-routing',
        allowed_workspaces: [{ slug: 'team-a' }],
        rate_limits: [{ type: 'requests', unit: 'rpm', value: 6000 }],
      });
      expect((await ok(['apply', '-f', path])).summary).toMatchObject({ create: 0, update: 0, unchanged: 3 });
      writeFileSync(path, file('[team-a, default]'));
      const updated = await ok(['apply', '-f', path]);
      expect(updated.summary).toMatchObject({ update: 1, unchanged: 2 });
      expect((await api.get('/v1/deployments/eu-production')).body.allowed_workspaces.map((w: any) => w.slug)).toEqual([
        'team-a',
        'default',
      ]);
    },
  );
});
