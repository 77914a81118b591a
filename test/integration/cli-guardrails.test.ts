import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliAgainstServer } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/start-test-server.js';

const CHECKS = `
checks:
  - id: default.regexMatch
    parameters: { rule: "^[a-z ]+$" }
actions: { onFail: block, message: No shouting }
`;

const APPLY = `
workspaces:
  - { slug: team-a, name: Team A }
guardrails:
  - slug: no-shouting
    name: No shouting
    checks:
      - { id: default.regexMatch, parameters: { rule: "^[a-z ]+$" } }
    actions: { deny: true }
  - slug: team-length
    name: Team length
    workspace: team-a
    checks:
      - { id: default.wordCount, parameters: { minWords: 1, maxWords: 100 } }
      - { id: default.webhook, parameters: { webhookURL: "https://hooks.example.test/x", headers: { Authorization: "Bearer apply-secret-1" } } }
configs:
  - slug: guarded
    name: Guarded
    workspace: team-a
    config:
      input_guardrails: [no-shouting, team-length]
      provider: "@openai-prod"
`;

describe('svcgw guardrails', () => {
  it('creates, lists, shows by slug or name, updates and deletes (with --yes)', { timeout: 120_000 }, async () => {
    const { ok, cli, fails, api } = await cliAgainstServer();
    const dir = makeTempDir();
    const file = join(dir, 'guard.yaml');
    writeFileSync(file, CHECKS);

    const created = await ok(['guardrails', 'create', '--name', 'Quiet please', '--slug', 'quiet', '-f', file]);
    expect(created).toMatchObject({ slug: 'quiet', object: 'guardrail' });
    const listed = await ok(['guardrails', 'list']);
    expect(listed.data.map((g: any) => g.slug)).toEqual(['quiet']);
    const byName = await ok(['guardrails', 'get', 'Quiet please']);
    expect(byName).toMatchObject({ id: created.id, actions: { deny: true, message: 'No shouting' } });
    expect((await ok(['guardrails', 'get', 'quiet'])).id).toBe(created.id);

    writeFileSync(file, 'checks:\n  - { id: default.wordCount, parameters: { minWords: 2, maxWords: 3 } }\n');
    await ok(['guardrails', 'update', 'quiet', '-f', file, '--name', 'Short']);
    const versions = await ok(['guardrails', 'versions', 'Short']);
    expect(versions.data.map((v: any) => v.version)).toEqual([2, 1]);
    expect((await api.get('/v1/guardrails/quiet')).body.actions.message).toBe('No shouting');

    writeFileSync(file, 'checks:\n  - { id: vendor.moderateContent }\nactions: {}\n');
    await fails(['guardrails', 'create', '--name', 'Vendor', '-f', file], 1, /vendor\.moderateContent/);
    await fails(['guardrails', 'delete', 'quiet'], 2, /--yes/);
    const table = await cli(['guardrails', 'list']);
    expect(table.stdout).toContain('quiet');
    await ok(['guardrails', 'delete', 'quiet', '--yes']);
    expect((await api.get('/v1/guardrails')).body.total).toBe(0);
  });

  it(
    'apply creates guardrails before the configs that name them, and a second apply changes nothing',
    { timeout: 120_000 },
    async () => {
      const { ok, api, server } = await cliAgainstServer();
      const dir = makeTempDir();
      const path = join(dir, 'svcgw.yaml');
      writeFileSync(path, APPLY);

      const first = await ok(['apply', '-f', path]);
      expect(first.steps.map((s: any) => [s.kind, s.name, s.action])).toEqual([
        ['workspace', 'team-a', 'create'],
        ['guardrail', 'no-shouting', 'create'],
        ['guardrail', 'team-length', 'create'],
        ['config', 'guarded', 'create'],
      ]);
      const team = (await api.get('/v1/workspaces/team-a')).body;
      expect((await api.get('/v1/guardrails/team-length')).body.workspace_id).toBe(team.id);
      expect((await api.get('/v1/guardrails/no-shouting')).body.workspace_id).toBeNull();

      const again = await ok(['apply', '-f', path]);
      expect(again).toMatchObject({ changed: false, summary: { create: 0, update: 0, unchanged: 4 } });
      expect((await api.get('/v1/guardrails/team-length/versions')).body.total).toBe(1);

      writeFileSync(path, APPLY.replace('maxWords: 100', 'maxWords: 50'));
      const changed = await ok(['apply', '-f', path]);
      expect(changed.steps.find((s: any) => s.kind === 'guardrail' && s.action === 'update')).toMatchObject({
        name: 'team-length',
        changes: ['checks'],
      });
      expect((await api.get('/v1/guardrails/team-length/versions')).body.total).toBe(2);
      // The secret the file gave is kept (the server shows it masked).
      const stored = (await api.get('/v1/guardrails/team-length')).body.checks[1].parameters.headers.Authorization;
      expect(stored).toBe('[REDACTED]');
      const rows = await server.server.db
        .selectFrom('guardrail_versions')
        .select('checks')
        .orderBy('version', 'desc')
        .execute();
      expect(rows[0]!.checks).toContain('apply-secret-1');
    },
  );
});
