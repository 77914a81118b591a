import { describe, expect, it } from 'vitest';
import { cliAgainstServer, runCliWithInput } from '../helpers/cli.js';

describe('svcgw integrations, providers and virtual-keys', () => {
  it(
    'stores a provider key read from stdin, shows it masked, and manages providers over it',
    { timeout: 90_000 },
    async () => {
      const { ok, fails, env, cli } = await cliAgainstServer();
      const secret = 'sk-proj-cli-test-0123456789abcd';
      const created = await runCliWithInput(
        [
          'integrations',
          'create',
          '--name',
          'OpenAI',
          '--slug',
          'openai-main',
          '--provider',
          'openai',
          '--key-stdin',
          '--tag',
          'env=prod',
          '--no-default-provider',
          '--json',
        ],
        `${secret}\n`,
        env,
      );
      expect(created.code, created.stderr).toBe(0);
      expect(JSON.parse(created.stdout)).toMatchObject({ slug: 'openai-main', object: 'integration' });

      const got = await ok(['integrations', 'get', 'openai-main']);
      expect(got).toMatchObject({ masked_key: 'sk-p****abcd', tags: { env: 'prod' }, ai_provider_id: 'openai' });
      expect((await cli(['integrations', 'list'])).stdout).not.toContain(secret);
      expect((await ok(['integrations', 'list', '--tag', 'env=prod'])).data).toHaveLength(1);
      await ok([
        'integrations',
        'update',
        'openai-main',
        '--description',
        'main account',
        '--config',
        'openai_project=proj_1',
      ]);
      expect(await ok(['integrations', 'get', 'openai-main'])).toMatchObject({
        description: 'main account',
        configurations: { openai_project: 'proj_1' },
      });
      await fails(['integrations', 'create', '--name', 'X', '--provider', 'no-such-provider'], 1, /no-such-provider/);
      await fails(
        ['integrations', 'create', '--name', 'X', '--provider', 'openai', '--key', 'a', '--key-stdin'],
        2,
        /either --key or --key-stdin/,
      );

      await ok(['workspaces', 'create', '--name', 'Team A', '--slug', 'team-a']);
      const provider = await ok([
        'providers',
        'create',
        '--name',
        'OpenAI A',
        '--slug',
        'openai',
        '--integration',
        'openai-main',
        '--workspace',
        'team-a',
      ]);
      expect(provider).toMatchObject({ slug: 'openai', object: 'provider' });
      expect(
        (await ok(['providers', 'list', '--workspace', 'team-a'])).data.map((p: { slug: string }) => p.slug),
      ).toEqual(['openai']);
      await ok(['providers', 'update', 'openai', '--workspace', 'team-a', '--note', 'billing: A']);
      expect(await ok(['providers', 'get', 'openai', '--workspace', 'team-a'])).toMatchObject({
        note: 'billing: A',
        ai_provider_id: 'openai',
      });
      await ok(['providers', 'delete', 'openai', '--workspace', 'team-a', '--yes']);
      expect((await ok(['providers', 'list', '--workspace', 'team-a'])).data).toEqual([]);
      await fails(
        ['providers', 'create', '--name', 'P', '--integration', 'missing', '--workspace', 'team-a'],
        1,
        /missing/,
      );

      await ok(['integrations', 'delete', 'openai-main', '--yes']);
      expect((await ok(['integrations', 'get', 'openai-main'])).status).toBe('archived');
    },
  );

  it('manages virtual keys', async () => {
    const { ok, fails } = await cliAgainstServer();
    const vk = await ok([
      'virtual-keys',
      'create',
      '--name',
      'legacy',
      '--slug',
      'legacy-openai',
      '--provider',
      'openai',
      '--key',
      'sk-legacy-0123456789abcdef',
    ]);
    expect(vk).toMatchObject({ slug: 'legacy-openai', object: 'virtual-key' });
    expect(await ok(['virtual-keys', 'get', 'legacy-openai'])).toMatchObject({
      masked_key: 'sk-l****cdef',
      provider: 'openai',
    });
    await ok([
      'virtual-keys',
      'update',
      'legacy-openai',
      '--note',
      'old',
      '--config',
      'custom_host=https://proxy.example.com/v1',
    ]);
    expect(await ok(['virtual-keys', 'get', 'legacy-openai'])).toMatchObject({
      note: 'old',
      configurations: { custom_host: 'https://proxy.example.com/v1' },
    });
    expect((await ok(['virtual-keys', 'list'])).total).toBe(1);
    await ok(['virtual-keys', 'delete', 'legacy-openai', '--yes']);
    expect((await ok(['virtual-keys', 'list'])).total).toBe(0);
    await fails(['virtual-keys', 'create', '--name', 'x', '--provider', 'openai'], 1, /key/);
    await fails(['virtual-keys', 'update', 'legacy-openai', '--config', 'novalue'], 2, /key=value/);
  });

  it("stores the provider's URL from --custom-host and refuses unknown provider settings", async () => {
    const { ok, fails, api } = await cliAgainstServer();
    const local = 'http://127.0.0.1:11434';
    const common = ['--provider', 'ollama', '--no-default-provider'];
    await ok(['integrations', 'create', '--name', 'Local', '--slug', 'local', ...common, '--custom-host', local]);
    expect((await ok(['integrations', 'get', 'local'])).configurations).toEqual({ custom_host: local });

    // A typo would have been stored silently and traffic sent to the provider's default host.
    const typo = await fails(
      ['integrations', 'create', '--name', 'Typo', ...common, '--config', `custom_hots=${local}`],
      2,
      /unknown provider setting custom_hots; known settings: .*custom_host/,
    );
    expect(typo.stderr).toContain('azure_resource_name');
    await fails(
      ['virtual-keys', 'update', 'x', '--config', 'aws_regoin=us-east-1'],
      2,
      /unknown provider setting aws_regoin/,
    );
    await fails(
      ['integrations', 'update', 'local', '--custom-host', local, '--config', 'custom_host=http://127.0.0.1:1'],
      2,
      /--custom-host or --config custom_host/,
    );
    expect((await api.get('/v1/integrations')).body.data.map((i: { slug: string }) => i.slug)).toEqual(['local']);

    await ok([
      'virtual-keys',
      'create',
      '--name',
      'vk',
      '--slug',
      'vk',
      '--provider',
      'openai',
      '--key',
      'sk-0123456789abcdef',
      '--custom-host',
      'https://proxy.example.com/v1',
      '--config',
      'openai_project=p1',
    ]);
    expect((await ok(['virtual-keys', 'get', 'vk'])).configurations).toEqual({
      custom_host: 'https://proxy.example.com/v1',
      openai_project: 'p1',
    });
  });
});
