import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ownerKeyOf, runCli, spawnServe, waitForOutput } from '../helpers/cli.js';
import { apiClient } from '../helpers/http.js';
import { makeTempDir } from '../helpers/start-test-server.js';

const FILE = `
workspaces:
  - { slug: team-a, name: Team A }
integrations:
  - { slug: openai-main, name: OpenAI, ai_provider_id: openai, key: "\${TEST_OPENAI_KEY}" }
providers:
  - { slug: openai, name: OpenAI for team A, integration: openai-main, workspace: team-a }
configs:
  - { slug: chat, name: Chat, workspace: team-a, config: { provider: "@openai" } }
api_keys:
  - { name: app, workspace: team-a, scopes: [completions.write] }
`;
const SECRET = 'sk-startup-file-0123456789abcdef';

function setup(text = FILE) {
  const dir = makeTempDir();
  const file = join(dir, 'svcgw.yaml');
  writeFileSync(file, text);
  return { dataDir: join(dir, 'data'), file };
}

describe('svcgw serve --apply', () => {
  it('applies the file as the owner on the first start, and a restart with it changes nothing and says so', async () => {
    const { dataDir, file } = setup();
    const env = { TEST_OPENAI_KEY: SECRET };
    const first = await spawnServe(['--data-dir', dataDir, '--apply', file], env);
    const ownerKey = await ownerKeyOf(first);
    await waitForOutput(first.stdout, /startup file \S+ applied: 5 created, 0 updated, 0 unchanged/);
    // The new API key is for the person starting the server: shown once, never in the log stream.
    const appKey = await waitForOutput(first.stderr, /app {2}svc-[A-Za-z0-9_-]{43}/);
    expect(first.stdout()).not.toContain(appKey.slice(5));
    expect(first.stdout() + first.stderr()).not.toContain(SECRET);

    const api = apiClient(first.url, ownerKey);
    expect((await api.get('/v1/integrations/openai-main')).body.masked_key).toBe('sk-s****cdef');
    expect((await api.get('/v1/providers/openai?workspace_id=team-a')).status).toBe(200);
    expect((await api.get('/v1/configs/chat')).body.slug).toBe('chat');
    // Audited as the system acting for the owner; the in-memory key is not accepted afterwards.
    const audit = (await api.get('/v1/audit-logs')).body.data;
    const owner = (await api.get('/v1/users')).body.data.find((u: { role: string }) => u.role === 'owner');
    const created = audit.filter((r: { request_body?: unknown; uri: string }) => r.uri === '/v1/workspaces');
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ user_type: 'system', user_id: owner.id, api_key_id: null });
    const auditCount = (await api.get('/v1/audit-logs')).body.total;
    expect(await first.stop()).toBe(0);

    const second = await spawnServe(['--data-dir', dataDir, '--apply', file], env);
    const line = await waitForOutput(second.stdout, /"msg":"startup file [^"]+"/);
    expect(line).toMatch(/startup file \S+: no changes, the server already matches it \(5 unchanged\)/);
    const again = apiClient(second.url, ownerKey);
    expect((await again.get('/v1/audit-logs')).body.total).toBe(auditCount);
    expect((await again.get('/v1/api-keys')).body.data.filter((k: { name: string }) => k.name === 'app')).toHaveLength(
      1,
    );
    expect(second.stderr()).not.toMatch(/new API keys/);
    expect(await second.stop()).toBe(0);
  });

  it('refuses to start on an invalid file or an unset variable (exit 2), and on a file the server refuses (exit 1) with nothing applied', async () => {
    const bad = setup('workspaces: [{ slug: Bad Slug, name: x }]\n');
    const invalid = await runCli(['serve', '--port', '0', '--data-dir', bad.dataDir, '--apply', bad.file]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/svcgw: .*svcgw\.yaml is not a valid apply file:\n {2}workspaces\.0\.slug/);
    expect(invalid.stdout).not.toMatch(/listening/);

    const unset = setup();
    const missing = await runCli(['serve', '--port', '0', '--data-dir', unset.dataDir, '--apply', unset.file]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/environment variable not set: TEST_OPENAI_KEY/);

    // The second key's scope does not exist: the server's dry run refuses it before anything is made.
    const refused = setup(`${FILE}  - { name: broken, workspace: team-a, scopes: [no.such.scope] }\n`);
    const res = await runCli(['serve', '--port', '0', '--data-dir', refused.dataDir, '--apply', refused.file], {
      TEST_OPENAI_KEY: SECRET,
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      /svcgw: --apply \S+svcgw\.yaml: create api key team-a\/broken failed: Unknown scope no\.such\.scope/,
    );
    expect(res.stdout).toMatch(/startup file \S+ failed; stopping/);
    const after = await spawnServe(['--data-dir', refused.dataDir]);
    const owner = /svc-[A-Za-z0-9_-]{43}/.exec(res.stderr)![0];
    const api = apiClient(after.url, owner);
    expect((await api.get('/v1/workspaces')).body.data.map((w: { slug: string }) => w.slug)).toEqual(['default']);
    expect((await api.get('/v1/integrations')).body.total).toBe(0);
  });
});
