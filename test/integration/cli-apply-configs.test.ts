import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliAgainstServer } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/start-test-server.js';

const FILE = `
workspaces:
  - { slug: team-a, name: Team A }
configs:
  - slug: prod-fallback
    name: Prod fallback
    workspace: team-a
    config:
      strategy: { mode: fallback, on_status_codes: [429, 500, 503] }
      retry: { attempts: 3, on_status_codes: [429], use_retry_after_header: true }
      request_timeout: 30000
      cache: { mode: simple, max_age: 3600 }
      targets:
        - { provider: "@openai-prod", override_params: { model: gpt-4o-mini } }
        - { provider: "@groq", override_params: { model: llama-3.1-8b-instant } }
  - slug: plain
    name: Plain
    config: { provider: "@openai-prod" }
`;

/** The same config as FILE's prod-fallback, with every object's keys in another order. */
const REORDERED = {
  targets: [
    { override_params: { model: 'gpt-4o-mini' }, provider: '@openai-prod' },
    { override_params: { model: 'llama-3.1-8b-instant' }, provider: '@groq' },
  ],
  request_timeout: 30000,
  cache: { max_age: 3600, mode: 'simple' },
  retry: { use_retry_after_header: true, on_status_codes: [429], attempts: 3 },
  strategy: { on_status_codes: [429, 500, 503], mode: 'fallback' },
};

describe('svcgw apply: configs', () => {
  it(
    'creates configs, leaves equal ones alone, versions a changed object and updates name and status in place',
    { timeout: 120_000 },
    async () => {
      const { ok, cli, api } = await cliAgainstServer();
      const dir = makeTempDir();
      const path = join(dir, 'svcgw.yaml');
      writeFileSync(path, FILE);
      const versions = async (slug: string) => (await api.get(`/v1/configs/${slug}/versions`)).body.total as number;

      // Dry run: the plan, and nothing changed on the server.
      const dry = await ok(['apply', '-f', path, '--dry-run']);
      expect(dry).toMatchObject({ dry_run: true, changed: false, summary: { create: 3, update: 0, unchanged: 0 } });
      expect(dry.steps).toEqual([
        { kind: 'workspace', name: 'team-a', action: 'create', changes: ['name'] },
        { kind: 'config', name: 'prod-fallback', action: 'create', changes: ['workspace', 'name', 'config'] },
        { kind: 'config', name: 'plain', action: 'create', changes: ['workspace', 'name', 'config'] },
      ]);
      expect((await api.get('/v1/configs')).body.total).toBe(0);

      // Apply: created where the file says, with the object as written.
      expect(await ok(['apply', '-f', path])).toMatchObject({ changed: true, summary: { create: 3 } });
      const teamA = (await api.get('/v1/workspaces/team-a')).body;
      const created = (await api.get('/v1/configs/prod-fallback')).body;
      expect(created).toMatchObject({
        name: 'Prod fallback',
        status: 'active',
        version: 1,
        workspace_id: teamA.id,
        config: REORDERED,
      });
      const defaultWs = (await api.get('/v1/workspaces')).body.data.find((w: { is_default: boolean }) => w.is_default);
      expect((await api.get('/v1/configs/plain')).body).toMatchObject({
        workspace_id: defaultWs.id,
        config: { provider: '@openai-prod' },
      });

      // Applying again is a no-op: no request, no new version.
      const again = await cli(['apply', '-f', path]);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toMatch(/No changes: the server already matches .*\(3 unchanged\)/);
      expect(await versions('prod-fallback')).toBe(1);
      expect(await versions('plain')).toBe(1);

      // Key order does not matter: the same object written as JSON in another order is still equal.
      const jsonPath = join(dir, 'svcgw.json');
      writeFileSync(
        jsonPath,
        JSON.stringify(
          { configs: [{ slug: 'prod-fallback', name: 'Prod fallback', workspace: teamA.id, config: REORDERED }] },
          null,
          2,
        ),
      );
      expect(await ok(['apply', '-f', jsonPath])).toMatchObject({
        changed: false,
        summary: { create: 0, update: 0, unchanged: 1 },
      });
      expect(await versions('prod-fallback')).toBe(1);

      // A changed object: the dry run names it and changes nothing; the apply makes version 2.
      writeFileSync(path, FILE.replace('attempts: 3', 'attempts: 5'));
      const plan = await cli(['apply', '-f', path, '--dry-run']);
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stdout).toMatch(/~ update\s+config\s+prod-fallback \(config\)/);
      expect(plan.stdout).toMatch(/0 to create, 1 to update, 2 unchanged\. Dry run: nothing was changed\./);
      expect(await versions('prod-fallback')).toBe(1);
      expect(await ok(['apply', '-f', path])).toMatchObject({
        changed: true,
        summary: { create: 0, update: 1, unchanged: 2 },
      });
      expect(await versions('prod-fallback')).toBe(2);
      const v2 = (await api.get('/v1/configs/prod-fallback')).body;
      expect(v2).toMatchObject({ version: 2, config: { retry: { attempts: 5 } } });
      expect((await api.get('/v1/configs/prod-fallback/versions/1')).body.config.retry.attempts).toBe(3);
      expect((await ok(['apply', '-f', path])).summary).toEqual({ create: 0, update: 0, unchanged: 3 });
      expect(await versions('prod-fallback')).toBe(2);

      // Name and status change in place, without a version; an archived config is found again.
      const archivedFile = FILE.replace('attempts: 3', 'attempts: 5').replace(
        'name: Plain',
        'name: Plain (retired)\n    status: archived',
      );
      writeFileSync(path, archivedFile);
      const retire = await ok(['apply', '-f', path]);
      expect(retire.steps.find((s: { name: string }) => s.name === 'plain')).toMatchObject({
        action: 'update',
        changes: ['name', 'status'],
      });
      const plain = (await api.get(`/v1/configs/${(await api.get('/v1/configs?status=archived')).body.data[0].id}`))
        .body;
      expect(plain).toMatchObject({ slug: 'plain', name: 'Plain (retired)', status: 'archived', version: 1 });
      expect((await ok(['apply', '-f', path])).summary).toEqual({ create: 0, update: 0, unchanged: 3 });

      // Back to active (status defaults to active), with a changed object: restored, version 2.
      writeFileSync(
        path,
        FILE.replace('attempts: 3', 'attempts: 5').replace(
          '{ provider: "@openai-prod" }',
          '{ provider: "@openai-prod", request_timeout: 1000 }',
        ),
      );
      const restore = await ok(['apply', '-f', path]);
      expect(restore.steps.find((s: { name: string }) => s.name === 'plain')).toMatchObject({
        action: 'update',
        changes: ['name', 'config', 'status'],
      });
      expect((await api.get('/v1/configs/plain')).body).toMatchObject({
        id: plain.id,
        name: 'Plain',
        status: 'active',
        version: 2,
        config: { request_timeout: 1000 },
      });
    },
  );

  it(
    'creates a config declared archived, and says when a config would move to another workspace',
    { timeout: 60_000 },
    async () => {
      const { ok, fails, api } = await cliAgainstServer();
      const dir = makeTempDir();
      const path = join(dir, 'svcgw.json');
      writeFileSync(
        path,
        JSON.stringify({
          configs: [{ slug: 'old', name: 'Old', config: { request_timeout: 5000 }, status: 'archived' }],
        }),
      );
      expect((await ok(['apply', '-f', path])).steps).toEqual([
        {
          kind: 'config',
          name: 'old',
          action: 'create',
          changes: ['workspace', 'name', 'config', 'status'],
          state: 'applied',
        },
      ]);
      expect((await api.get('/v1/configs?status=archived')).body.data).toMatchObject([
        { slug: 'old', status: 'archived' },
      ]);
      expect((await ok(['apply', '-f', path])).summary).toEqual({ create: 0, update: 0, unchanged: 1 });

      const moved = join(dir, 'moved.yaml');
      writeFileSync(
        moved,
        'workspaces: [{ slug: team-b, name: Team B }]\nconfigs: [{ slug: old, name: Old, workspace: team-b, config: { request_timeout: 5000 }, status: archived }]\n',
      );
      await fails(['apply', '-f', moved], 1, /config old: its workspace is default on the server and cannot change/);
      await fails(['apply', '-f', moved, '--dry-run'], 1, /cannot change/);
      expect((await api.get('/v1/workspaces/team-b')).status).toBe(404); // nothing was applied
    },
  );

  it(
    'reports the server refusing a config with its slug and JSON path, and a malformed entry as a usage error',
    { timeout: 60_000 },
    async () => {
      const { fails, api } = await cliAgainstServer();
      const dir = makeTempDir();
      const write = (name: string, text: string) => {
        writeFileSync(join(dir, name), text);
        return join(dir, name);
      };
      const bad = write(
        'bad.yaml',
        `configs:
  - slug: good
    name: Good
    config: { provider: "@openai-prod" }
  - slug: weights
    name: Weights
    config:
      strategy: { mode: loadbalance }
      targets: [{ provider: "@a", weight: 1 }, { provider: "@b", weight: -1 }]
      cache: { mode: sometimes }
`,
      );
      // A dry run asks the server, which validates configs: it fails where the real run would.
      const dry = await fails(
        ['apply', '-f', bad, '--dry-run'],
        1,
        /create config weights failed: the server refused its config \(HTTP 400 AB01_INVALID_CONFIG\), 2 problems:\n/,
      );
      expect(dry.stdout).toMatch(/Dry run: nothing was changed, and the real run would fail/);
      expect((await api.get('/v1/configs')).body.data).toEqual([]);
      const refused = await fails(
        ['apply', '-f', bad],
        1,
        /create config weights failed: the server refused its config \(HTTP 400 AB01_INVALID_CONFIG\), 2 problems:\n/,
      );
      expect(refused.stderr).toMatch(/^ {4}config\.targets\[1\]\.weight: .+$/m);
      expect(refused.stderr).toMatch(/^ {4}config\.cache\.mode: .+$/m);
      expect(refused.stderr).toMatch(/1 earlier change was applied/);
      expect(refused.stdout).toMatch(/Stopped: 1 created, 0 updated, 0 unchanged; 1 not applied\./);
      expect((await api.get('/v1/configs')).body.data.map((c: { slug: string }) => c.slug)).toEqual(['good']);

      // An update is refused the same way, and the stored version stays.
      const key = write(
        'key.yaml',
        'configs: [{ slug: good, name: Good, config: { provider: openai, api_key: "${OPENAI_KEY}" } }]',
      );
      const keyed = await fails(
        ['apply', '-f', key],
        1,
        /update config good failed: the server refused its config \(HTTP 400 AB01_INVALID_CONFIG\), 1 problem:\n {4}config\.api_key: a stored config cannot hold a provider key/,
        { OPENAI_KEY: 'sk-never-stored-0000' },
      );
      expect(keyed.stderr).not.toMatch(/sk-never-stored/);
      expect((await api.get('/v1/configs/good/versions')).body.total).toBe(1);

      await fails(
        ['apply', '-f', write('slug.yaml', 'configs: [{ slug: Bad Slug, name: x, config: {} }]')],
        2,
        /configs\.0\.slug/,
      );
      await fails(
        ['apply', '-f', write('shape.yaml', 'configs: [{ slug: s, name: x, config: [1, 2] }]')],
        2,
        /configs\.0\.config/,
      );
      await fails(['apply', '-f', write('missing.yaml', 'configs: [{ slug: s, name: x }]')], 2, /configs\.0\.config/);
      await fails(
        [
          'apply',
          '-f',
          write('twice.yaml', 'configs: [{ slug: s, name: x, config: {} }, { slug: s, name: y, config: {} }]'),
        ],
        2,
        /configs names s twice/,
      );
      await fails(
        ['apply', '-f', write('nows.yaml', 'configs: [{ slug: s, name: x, workspace: nowhere, config: {} }]')],
        1,
        /config s: workspace nowhere does not exist/,
      );
    },
  );
});
