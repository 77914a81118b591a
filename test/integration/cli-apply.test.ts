import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliAgainstServer } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/start-test-server.js';

const FILE = `
workspaces:
  - slug: team-a
    name: Team A
    usage_limits: { credit_limit: 100, periodic_reset: monthly }
integrations:
  - slug: openai-main
    name: OpenAI
    ai_provider_id: openai
    key: \${OPENAI_KEY}
    tags: { env: prod }
providers:
  - { slug: openai, name: OpenAI for team A, integration: openai-main, workspace: team-a }
policies:
  rate_limits:
    - name: chat rpm
      workspace: team-a
      conditions: [{ key: endpoint_type, value: chatComplete }]
      group_by: [{ key: api_key }]
      unit: rpm
      value: 100
  usage_limits:
    - name: budget
      workspace: team-a
      conditions: [{ key: workspace_id, value: team-a }]
      group_by: [{ key: api_key }]
      credit_limit: 50
      periodic_reset: monthly
api_keys:
  - { name: ci, workspace: team-a, scopes: [completions.write, logs.list] }
  - { name: ops, type: admin, scopes: [workspaces.list, workspaces.read] }
`;

describe('svcgw apply', () => {
  it('plans with --dry-run, applies, and a second apply changes nothing and says so', { timeout: 90_000 }, async () => {
    const { ok, cli, api } = await cliAgainstServer();
    const dir = makeTempDir();
    const path = join(dir, 'svcgw.yaml');
    writeFileSync(path, FILE);
    const secrets = { OPENAI_KEY: 'sk-apply-test-0123456789wxyz' };

    const dry = await ok(['apply', '-f', path, '--dry-run'], secrets);
    expect(dry).toMatchObject({
      dry_run: true,
      changed: false,
      summary: { create: 7, update: 0, unchanged: 0 },
      keys: [],
    });
    expect(dry.steps.map((s: { kind: string }) => s.kind)).toEqual([
      'workspace',
      'integration',
      'provider',
      'rate_limits_policy',
      'usage_limits_policy',
      'api_key',
      'api_key',
    ]);
    expect((await api.get('/v1/workspaces')).body.total).toBe(1); // nothing was changed

    const keysOut = join(dir, 'keys.json');
    const first = await ok(['apply', '-f', path, '--keys-out', keysOut], secrets);
    expect(first).toMatchObject({ changed: true, summary: { create: 7 }, keys_out: keysOut });
    expect(JSON.stringify(first)).not.toMatch(/svc-[A-Za-z0-9_-]{43}/); // keys went to the file only
    expect(statSync(keysOut).mode & 0o777).toBe(0o600);
    const { keys } = JSON.parse(readFileSync(keysOut, 'utf8')) as { keys: { name: string; key: string }[] };
    expect(keys.map((k) => k.name)).toEqual(['team-a/ci', 'admin/ops']);

    expect((await api.get('/v1/integrations/openai-main')).body).toMatchObject({
      masked_key: 'sk-a****wxyz',
      tags: { env: 'prod' },
    });
    expect((await api.get('/v1/providers/openai?workspace_id=team-a')).body.status).toBe('active');
    const ci = keys[0]!.key;
    expect((await ok(['logs', 'list'], { SVCGW_API_KEY: ci })).object).toBe('list'); // the created key works

    const second = await cli(['apply', '-f', path], secrets);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/No changes: the server already matches .*\(7 unchanged\)/);
    expect(second.stdout).not.toMatch(/[+~] (create|update)/);
    expect(await ok(['apply', '-f', path], secrets)).toMatchObject({
      changed: false,
      summary: { create: 0, update: 0, unchanged: 7 },
      keys: [],
    });

    // A change: the plan names it, the apply makes it, and nothing else moves.
    writeFileSync(path, FILE.replace('value: 100', 'value: 250'));
    const plan = await cli(['apply', '-f', path, '--dry-run'], secrets);
    expect(plan.stdout).toMatch(/~ update\s+rate limits policy\s+team-a\/chat rpm \(value\)/);
    expect(plan.stdout).toMatch(/0 to create, 1 to update, 6 unchanged\. Dry run: nothing was changed\./);
    expect((await ok(['apply', '-f', path], secrets)).summary).toEqual({ create: 0, update: 1, unchanged: 6 });
    const policies = (await api.get('/v1/policies/rate-limits?workspace_id=team-a')).body.data;
    expect(policies.map((p: { value: number }) => p.value)).toEqual([250]);
  });

  it('prints new keys once when there is no --keys-out, and reads JSON files', async () => {
    const { cli } = await cliAgainstServer();
    const path = join(makeTempDir(), 'svcgw.json');
    writeFileSync(
      path,
      JSON.stringify({ workspaces: [{ slug: 'ci', name: 'CI' }], api_keys: [{ name: 'deploy', workspace: 'ci' }] }),
    );
    const first = await cli(['apply', '-f', path]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(
      /New API keys, shown once \(store them now\):\n {4}ci\/deploy {2}svc-[A-Za-z0-9_-]{43}/,
    );
    const again = await cli(['apply', '-f', path]);
    expect(again.stdout).not.toMatch(/svc-/);
  });

  it('exits 2 on an invalid file and 1 when the server refuses or the plan cannot be applied', async () => {
    const { fails } = await cliAgainstServer();
    const dir = makeTempDir();
    const write = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    await fails(
      ['apply', '-f', write('bad.yaml', 'workspaces: [{ slug: Bad Slug, name: x }]')],
      2,
      /workspaces\.0\.slug/,
    );
    await fails(['apply', '-f', write('unknown.yaml', 'gateways: []')], 2, /gateways/);
    await fails(['apply', '-f', join(dir, 'missing.yaml')], 2, /cannot read/);
    await fails(['apply'], 2, /--file/);
    await fails(
      ['apply', '-f', write('ref.yaml', 'providers: [{ slug: p, name: P, integration: nope }]')],
      1,
      /integration nope does not exist/,
    );
    const scope = write('scope.yaml', 'api_keys: [{ name: k, workspace: default, scopes: [no.such.scope] }]');
    const refused = await fails(['apply', '-f', scope], 1, /create api key default\/k failed: Unknown scope/);
    expect(refused.stdout).toMatch(/Stopped/);
    // The dry run asks the server, so it fails where the real run did.
    const dry = await fails(['apply', '-f', scope, '--dry-run'], 1, /create api key default\/k failed: Unknown scope/);
    expect(dry.stdout).toMatch(/Dry run: nothing was changed, and the real run would fail/);
  });

  it(
    '--dry-run checks the whole plan on the server as one sequence (a key in a workspace the file creates) and keeps nothing',
    { timeout: 60_000 },
    async () => {
      const { cli, api } = await cliAgainstServer();
      const dir = makeTempDir();
      // Later steps build on earlier ones (a workspace, then a key in it): checked as one sequence.
      const chain = join(dir, 'chain.yaml');
      writeFileSync(
        chain,
        `workspaces: [{ slug: team-c, name: Team C }]
api_keys: [{ name: c-ci, workspace: team-c, scopes: [completions.write] }]
`,
      );
      const ok = await cli(['apply', '-f', chain, '--dry-run', '--json']);
      expect(ok.code, ok.stderr).toBe(0);
      expect(JSON.parse(ok.stdout)).toMatchObject({ dry_run: true, changed: false, keys: [] });
      expect((await api.get('/v1/workspaces')).body.total).toBe(1);
      expect((await api.get('/v1/api-keys')).body.total).toBe(1);
    },
  );
  it('reports exactly what it did before a failure, and --json carries the error', { timeout: 60_000 }, async () => {
    const { cli, api } = await cliAgainstServer();
    const file = join(makeTempDir(), 'keys.yaml');
    writeFileSync(
      file,
      `workspaces: [{ slug: team-a, name: Team A }]
api_keys:
  - { name: k1, workspace: default, scopes: [logs.list] }
  - { name: k2, workspace: default, scopes: [no.such.scope] }
  - { name: k3, workspace: default, scopes: [logs.list] }
`,
    );
    const res = await cli(['apply', '-f', file, '--json']);
    expect(res.code).toBe(1);
    const report = JSON.parse(res.stdout);
    expect(report.summary).toEqual({ create: 4, update: 0, unchanged: 0 });
    expect(report.applied).toEqual({ create: 2, update: 0, unchanged: 0 });
    expect(report.changed).toBe(true);
    expect(report.steps.map((s: { name: string; state: string }) => `${s.name}:${s.state}`)).toEqual([
      'team-a:applied',
      'default/k1:applied',
      'default/k2:failed',
      'default/k3:not applied',
    ]);
    expect(report.error).toMatchObject({
      message: expect.stringMatching(
        /create api key default\/k2 failed: Unknown scope.*\n2 earlier changes were applied/s,
      ),
      exit_code: 1,
      step: { kind: 'api_key', name: 'default/k2', action: 'create' },
    });
    expect(report.keys).toEqual([{ name: 'default/k1', id: expect.any(String), key: expect.stringMatching(/^svc-/) }]);
    const names = (await api.get('/v1/api-keys')).body.data.map((k: { name: string }) => k.name);
    expect(names).toContain('k1');
    expect(names).not.toContain('k3');

    // Applied again once k2 is fixed: the two done are unchanged, the rest is created.
    writeFileSync(file, readFileSync(file, 'utf8').replace('no.such.scope', 'logs.list'));
    const again = await cli(['apply', '-f', file]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/Applied: 2 created, 0 updated, 2 unchanged\./);
  });
});
