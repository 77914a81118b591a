import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliAgainstServer } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/start-test-server.js';

const MISSING = '00000000-0000-4000-8000-000000000000';

describe('svcgw keys', () => {
  it(
    "gives a key a default config, locks it, and removes it, keeping the key's default metadata",
    { timeout: 90_000 },
    async () => {
      const { ok, fails } = await cliAgainstServer();
      const file = join(makeTempDir(), 'prod.json');
      writeFileSync(file, JSON.stringify({ provider: 'openai', custom_host: 'http://127.0.0.1:9/v1' }));
      const slug = (await ok(['configs', 'create', '--name', 'Prod', '--slug', 'prod', '-f', file])).slug;
      const created = await ok(['keys', 'create', '--name', 'app', '--workspace', 'default', '--config', slug]);
      const configId = (await ok(['configs', 'get', slug])).id;
      expect((await ok(['keys', 'get', created.id])).defaults).toEqual({
        config_id: configId,
        metadata: {},
        allow_config_override: true,
        allowed_models: null,
      });

      await ok([
        'keys',
        'update',
        created.id,
        '--data',
        JSON.stringify({ defaults: { metadata: { team: 'search' }, config_id: slug } }),
      ]);
      await ok(['keys', 'update', created.id, '--lock-config']);
      expect((await ok(['keys', 'get', created.id])).defaults).toEqual({
        config_id: configId,
        metadata: { team: 'search' },
        allow_config_override: false,
        allowed_models: null,
      });
      await ok(['keys', 'update', created.id, '--no-config', '--unlock-config']);
      expect((await ok(['keys', 'get', created.id])).defaults).toEqual({
        config_id: null,
        metadata: { team: 'search' },
        allow_config_override: true,
        allowed_models: null,
      });
      await fails(['keys', 'update', created.id, '--config', 'no-such-config'], 1, /NOT_FOUND|No active config/);
    },
  );

  it(
    'creates, lists, gets, updates and revokes keys; a created key works for the next command',
    { timeout: 90_000 },
    async () => {
      const { ok, cli, fails } = await cliAgainstServer();
      const created = await ok([
        'keys',
        'create',
        '--name',
        'ci',
        '--workspace',
        'default',
        '--scopes',
        'completions.write,logs.list',
      ]);
      expect(created).toMatchObject({ object: 'api-key', id: expect.any(String), key: expect.stringMatching(/^svc-/) });

      const listed = await ok(['keys', 'list']);
      expect(listed.object).toBe('list');
      expect(listed.data.map((k: { id: string }) => k.id)).toContain(created.id);
      expect(JSON.stringify(listed)).not.toContain(created.key);

      await ok(['keys', 'update', created.id, '--name', 'ci-renamed', '--description', 'for CI']);
      expect(await ok(['keys', 'get', created.id])).toMatchObject({
        name: 'ci-renamed',
        description: 'for CI',
        scopes: ['completions.write', 'logs.list'],
        type: 'workspace-service',
      });

      // The new key, used by a following command: it may list logs but not keys.
      expect((await ok(['logs', 'list'], { SVCGW_API_KEY: created.key })).object).toBe('list');
      await fails(['keys', 'list'], 1, /MISSING_SCOPE/, { SVCGW_API_KEY: created.key });

      const text = await cli(['keys', 'list']);
      expect(text.stdout).toMatch(/^ID\s+NAME\s+TYPE/);
      expect(text.stdout).toContain('ci-renamed');

      await ok(['keys', 'delete', created.id, '--yes']);
      await fails(['logs', 'list'], 1, /the API key was refused.*revoked/, { SVCGW_API_KEY: created.key });
    },
  );

  it('rotates a key: the new value works for a following command', async () => {
    const { ok, fails } = await cliAgainstServer();
    const created = await ok([
      'keys',
      'create',
      '--name',
      'rotating',
      '--workspace',
      'default',
      '--scopes',
      'completions.write,logs.list',
    ]);
    const rotated = await ok(['keys', 'rotate', created.id]);
    expect(rotated).toMatchObject({ id: created.id, key: expect.stringMatching(/^svc-/) });
    expect(rotated.key).not.toBe(created.key);
    expect((await ok(['logs', 'list'], { SVCGW_API_KEY: rotated.key })).object).toBe('list');
    await fails(['keys', 'rotate', MISSING], 1, /not found/i);
  });

  it("exits 1 with the server's message on server errors and 2 on usage errors", { timeout: 90_000 }, async () => {
    const { fails } = await cliAgainstServer();
    await fails(['keys', 'get', MISSING], 1, /^svcgw: API key not found\.? \(HTTP 404 NOT_FOUND\)/);
    await fails(
      ['keys', 'create', '--name', 'x', '--workspace', 'default', '--scopes', 'no.such.scope'],
      1,
      /Unknown scope no\.such\.scope.*UNKNOWN_SCOPE/,
    );
    await fails(
      ['keys', 'create', '--scopes', 'completions.write'],
      2,
      /required option '--name <name>' not specified/,
    );
    await fails(
      ['keys', 'create', '--name', 'x', '--type', 'root'],
      2,
      /Allowed choices are admin, workspace-service, workspace-user/,
    );
    await fails(['keys', 'get'], 2, /missing required argument 'id\|name'/);
    await fails(['keys', 'list', '--page-size', 'many'], 2, /expected an integer/);
    await fails(['keys', 'frobnicate'], 2, /unknown command/);
    await fails(['keys', 'list', '--colour'], 2, /unknown option '--colour'/);
  });
});

describe('svcgw workspaces', () => {
  it('creates, lists, gets and updates workspaces, and reports conflicts', { timeout: 90_000 }, async () => {
    const { ok, fails } = await cliAgainstServer();
    const created = await ok([
      'workspaces',
      'create',
      '--name',
      'Team A',
      '--slug',
      'team-a',
      '--description',
      'first',
    ]);
    expect(created).toMatchObject({ slug: 'team-a', name: 'Team A', object: 'workspace' });
    expect((await ok(['workspaces', 'list'])).data.map((w: { slug: string }) => w.slug).sort()).toEqual([
      'default',
      'team-a',
    ]);
    await ok([
      'workspaces',
      'update',
      'team-a',
      '--name',
      'Team A (EU)',
      '--data',
      '{"usage_limits": {"credit_limit": 10}}',
    ]);
    expect(await ok(['workspaces', 'get', 'team-a'])).toMatchObject({
      name: 'Team A (EU)',
      description: 'first',
      usage_limits: [{ credit_limit: 10 }],
    });
    await fails(['workspaces', 'create', '--name', 'Again', '--slug', 'team-a'], 1, /HTTP 409/);
    await fails(['workspaces', 'get', 'nope'], 1, /HTTP 404/);
    await fails(['workspaces', 'update', 'team-a', '--data', '{bad'], 2, /expected JSON/);
    await ok(['workspaces', 'archive', 'team-a', '--yes']);
    expect(
      (await ok(['workspaces', 'list', '--status', 'archived'])).data.map((w: { slug: string }) => w.slug),
    ).toEqual(['team-a']);
    expect(await ok(['workspaces', 'unarchive', 'team-a'])).toMatchObject({ slug: 'team-a', status: 'active' });
    await fails(['workspaces', 'archive', 'default', '--yes'], 1, /default/i);
  });

  it('fetches every page with --all', async () => {
    const { ok, api } = await cliAgainstServer();
    for (let i = 0; i < 5; i++) await api.post('/v1/workspaces', { name: `W${i}`, slug: `w-${i}` });
    const page = await ok(['workspaces', 'list', '--page-size', '2']);
    expect(page).toMatchObject({ total: 6 });
    expect(page.data).toHaveLength(2);
    const all = await ok(['workspaces', 'list', '--page-size', '2', '--all']);
    expect(all.data).toHaveLength(6);
    expect(new Set(all.data.map((w: { id: string }) => w.id)).size).toBe(6);
  });
});

describe('svcgw policies, logs and audit-logs', () => {
  it('manages rate-limits and usage-limits policies', { timeout: 90_000 }, async () => {
    const { ok, fails } = await cliAgainstServer();
    const rl = await ok([
      'policies',
      'rate-limits',
      'create',
      '--workspace',
      'default',
      '--name',
      'chat rpm',
      '--condition',
      'endpoint_type=chatComplete',
      '--group-by',
      'api_key',
      '--unit',
      'rpm',
      '--value',
      '100',
    ]);
    expect(rl.object).toBe('rate_limits_policy');
    await ok(['policies', 'rate-limits', 'update', rl.id, '--value', '200']);
    expect(await ok(['policies', 'rate-limits', 'get', rl.id])).toMatchObject({
      value: 200,
      unit: 'rpm',
      conditions: [{ key: 'endpoint_type', value: 'chatComplete' }],
      status: 'active',
    });
    expect((await ok(['policies', 'rate-limits', 'list', '--workspace', 'default'])).data).toHaveLength(1);
    await ok(['policies', 'rate-limits', 'archive', rl.id, '--yes']);
    expect((await ok(['policies', 'rate-limits', 'list', '--status', 'archived'])).data[0].id).toBe(rl.id);
    await fails(
      [
        'policies',
        'rate-limits',
        'create',
        '--workspace',
        'default',
        '--condition',
        'endpoint_type=chatComplete',
        '--group-by',
        'api_key',
        '--unit',
        'rps',
        '--value',
        '1',
      ],
      2,
      /Allowed choices are rpm, rph, rpd, rpw/,
    );
    // Without --workspace an admin key's policy is organisation-wide, filed in the default workspace.
    await ok([
      'policies',
      'rate-limits',
      'create',
      '--condition',
      'endpoint_type=chatComplete',
      '--group-by',
      'api_key',
      '--unit',
      'rpm',
      '--value',
      '1',
    ]);

    const ul = await ok([
      'policies',
      'usage-limits',
      'create',
      '--workspace',
      'default',
      '--name',
      'budget',
      '--condition',
      'workspace_id=default',
      '--group-by',
      'api_key',
      '--credit-limit',
      '50',
      '--alert-threshold',
      '40',
      '--periodic-reset',
      'monthly',
    ]);
    await ok(['policies', 'usage-limits', 'update', ul.id, '--credit-limit', '80', '--no-alert-threshold']);
    expect(await ok(['policies', 'usage-limits', 'get', ul.id, '--include-usage'])).toMatchObject({
      credit_limit: 80,
      alert_threshold: null,
      periodic_reset: 'monthly',
      value_key_usage_map: {},
    });
    await fails(['policies', 'usage-limits', 'update', ul.id, '--alert-threshold', '90'], 1, /alert_threshold/);
    await ok(['policies', 'usage-limits', 'archive', ul.id, '--yes']);
    expect((await ok(['policies', 'usage-limits', 'get', ul.id])).status).toBe('archived');
    await fails(
      [
        'policies',
        'usage-limits',
        'create',
        '--workspace',
        'default',
        '--condition',
        'workspace_id=default',
        '--group-by',
        'api_key',
      ],
      2,
      /--credit-limit/,
    );
  });

  it('lists the audit log and request logs with filters', { timeout: 90_000 }, async () => {
    const { ok, fails, api } = await cliAgainstServer();
    await ok(['workspaces', 'create', '--name', 'Audited', '--slug', 'audited']);
    const audit = await ok(['audit-logs', 'list', '--resource-type', 'workspace', '--action', 'create']);
    expect(audit.data).toHaveLength(1);
    expect(audit.data[0]).toMatchObject({ method: 'POST', uri: '/v1/workspaces', response_status_code: 200 });
    await fails(['audit-logs', 'list', '--page-size', '500'], 2, /1 to 100/);
    // The reference's filters: path, actor kind, status, client address, request id.
    const byFilters = await ok([
      'audit-logs',
      'list',
      '--uri',
      '/v1/workspaces',
      '--user-type',
      'api_key',
      '--status',
      '200',
      '--request-id',
      audit.data[0].request_id,
    ]);
    expect(byFilters.data.map((r: { id: string }) => r.id)).toEqual([audit.data[0].id]);
    expect((await ok(['audit-logs', 'list', '--uri', '/v1/workspaces', '--user-type', 'user'])).data).toEqual([]);
    expect((await ok(['audit-logs', 'list', '--uri', '/v1/workspaces', '--status', '404'])).data).toEqual([]);
    expect((await ok(['audit-logs', 'list', '--client-ip', '203.0.113.9'])).data).toEqual([]);
    expect((await ok(['audit-logs', 'list', '--country', 'DE'])).data).toEqual([]);
    await fails(['audit-logs', 'list', '--country', 'Germany'], 1, /two-character code/);
    await fails(['audit-logs', 'list', '--user-type', 'robot'], 2, /robot/);
    await fails(['audit-logs', 'list', '--status', '42'], 2, /100 to 599/);

    const logs = await ok(['logs', 'list', '--status', '200', '--provider', 'openai']);
    expect(logs).toMatchObject({ object: 'list', total: 0, data: [] });
    await fails(['logs', 'get', MISSING], 1, /Log not found/);
    // One record: svcgw's flat record by default, the reference's LogObject on request.
    const inserted = await api.post('/v1/logs?workspace_id=default', {
      request: { url: 'https://api.openai.com/v1/chat/completions', body: { model: 'gpt-4o-mini' } },
      response: { status: 200, body: {}, response_time: 120 },
      metadata: { trace_id: 'cli-get' },
    });
    expect(inserted.status).toBe(200);
    const [listed] = (await ok(['logs', 'list', '--trace-id', 'cli-get'])).data;
    expect(await ok(['logs', 'get', listed.id])).toMatchObject({ id: listed.id, latency_ms: 120, log_format: 'flat' });
    expect(await ok(['logs', 'get', listed.id, '--log-format', 'structured'])).toMatchObject({
      _id: listed.id,
      response: { status: 200, responseTime: 120, lastUsedOptionJsonPath: 'config' },
      log_format: 'structured',
    });
    await fails(['logs', 'get', listed.id, '--log-format', 'xml'], 2, /xml/);
    await fails(['logs', 'list', '--status', '999'], 2, /an HTTP status code \(429\) or a class/);
    const key = (
      await api.post('/v1/api-keys/workspace/service', {
        name: 'no-audit',
        workspace_id: 'default',
        scopes: ['completions.write'],
      })
    ).body.key;
    await fails(['audit-logs', 'list'], 1, /KEY_TYPE_NOT_ALLOWED/, { SVCGW_API_KEY: key });
  });
});
