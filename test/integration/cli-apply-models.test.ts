import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it, onTestFinished } from 'vitest';
import { cliAgainstServer } from '../helpers/cli.js';
import { startMockOpenAI } from '../helpers/mock-openai-upstream.js';
import { makeTempDir } from '../helpers/start-test-server.js';

/** One file: a provider, its model list, a config with a fallback, and the aliases in front of them. */
const file = (mockUrl: string) => `
workspaces:
  - { slug: team-a, name: Team A }
integrations:
  - slug: openai-main
    name: OpenAI
    ai_provider_id: openai
    key: sk-apply-models-0123456789
    configurations: { custom_host: ${mockUrl} }
    allow_all_models: false
    models:
      - { slug: gpt-4o-mini }
      - { slug: gpt-4o }
      - { slug: my-finetune, is_finetune: true, base_model_slug: gpt-4o-mini }
providers:
  - { slug: openai, name: OpenAI for team A, integration: openai-main, workspace: team-a }
configs:
  - slug: chat-fallback
    name: chat with a fallback
    workspace: team-a
    config:
      strategy: { mode: fallback }
      targets:
        - { provider: "@openai", override_params: { model: gpt-4o-mini } }
        - { provider: "@openai", override_params: { model: gpt-4o } }
aliases:
  - { name: default-chat, workspace: team-a, config: chat-fallback }
  - { name: fast, model: "@openai/gpt-4o-mini", description: the cheap one }
api_keys:
  - { name: tool, workspace: team-a }
`;

describe('svcgw apply with models and aliases', () => {
  it(
    'declares providers, models and aliases in one file, idempotently; the gateway serves what it declares',
    {
      timeout: 90_000,
    },
    async () => {
      const mock = await startMockOpenAI();
      onTestFinished(() => mock.close());
      const { ok, cli, api, server } = await cliAgainstServer();
      const dir = makeTempDir();
      const path = join(dir, 'svcgw.yaml');
      writeFileSync(path, file(mock.baseUrl));

      const keysOut = join(dir, 'keys.json');
      const first = await ok(['apply', '-f', path, '--keys-out', keysOut]);
      expect(first.steps.map((s: { kind: string; action: string }) => `${s.action} ${s.kind}`)).toEqual([
        'create workspace',
        'create integration',
        'create integration_models',
        'create provider',
        'create config',
        'create alias',
        'create alias',
        'create api_key',
      ]);
      const second = await ok(['apply', '-f', path]);
      expect(second).toMatchObject({ changed: false, summary: { create: 0, update: 0, unchanged: 8 } });

      const models = (await api.get('/v1/integrations/openai-main/models')).body;
      expect(models).toMatchObject({ allow_all_models: false, total: 3 });
      expect((await ok(['integrations', 'models', 'list', 'openai-main'])).models).toHaveLength(3);
      const aliases = await ok(['aliases', 'list']);
      expect(
        aliases.data.map((a: { name: string; workspace_id: string | null }) => [a.name, a.workspace_id !== null]),
      ).toEqual([
        ['default-chat', true],
        ['fast', false],
      ]);

      // The key the file made, in a tool that takes only a base URL and a key.
      const { keys } = JSON.parse(readFileSync(keysOut, 'utf8')) as { keys: { key: string }[] };
      const client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: keys[0]!.key, maxRetries: 0 });
      mock.behave({ kind: 'error', status: 500 }, { times: 1 });
      await client.chat.completions.create({ model: 'default-chat', messages: [{ role: 'user', content: 'hi' }] });
      expect(mock.requests.map((r) => (r.json as { model: string }).model)).toEqual(['gpt-4o-mini', 'gpt-4o']);
      await client.chat.completions.create({ model: 'fast', messages: [{ role: 'user', content: 'hi' }] });
      const refused = await client.chat.completions
        .create({ model: '@openai/gpt-4.1', messages: [{ role: 'user', content: 'hi' }] })
        .catch((e: unknown) => e as { status: number; error: { code: string } });
      expect(refused).toMatchObject({ status: 403, error: { code: 'MODEL_NOT_ALLOWED' } });
      expect(mock.requests).toHaveLength(3);
      const listed = (await client.models.list()).data.map((m) => m.id);
      expect(listed.sort()).toEqual([
        '@openai/gpt-4o',
        '@openai/gpt-4o-mini',
        '@openai/my-finetune',
        'default-chat',
        'fast',
      ]);

      // A change to one model and one alias: the plan names them, and only they move.
      writeFileSync(
        path,
        file(mock.baseUrl)
          .replace('- { slug: gpt-4o }', '- { slug: gpt-4o, enabled: false }')
          .replace('description: the cheap one', 'description: the cheapest one'),
      );
      const plan = await cli(['apply', '-f', path, '--dry-run']);
      expect(plan.stdout).toMatch(/~ update\s+integration models\s+openai-main \(models\.gpt-4o\)/);
      expect(plan.stdout).toMatch(/~ update\s+alias\s+organisation\/fast \(description\)/);
      expect((await ok(['apply', '-f', path])).summary).toEqual({ create: 0, update: 2, unchanged: 6 });
      expect((await ok(['apply', '-f', path])).summary).toEqual({ create: 0, update: 0, unchanged: 8 });
      expect((await client.models.list()).data.map((m) => m.id)).not.toContain('@openai/gpt-4o');
    },
  );

  it('refuses an organisation-wide alias to a config before changing anything', async () => {
    const { fails, api } = await cliAgainstServer();
    const path = join(makeTempDir(), 'svcgw.yaml');
    writeFileSync(path, 'aliases:\n  - { name: x, config: some-config }\n');
    await fails(['apply', '-f', path], 1, /organisation-wide alias names a model/);
    expect((await api.get('/v1/model-aliases')).body.total).toBe(0);
  });
});
