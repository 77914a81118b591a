import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliAgainstServer } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/start-test-server.js';

describe('svcgw configs', () => {
  it('creates a config from YAML, makes a new version from JSON, lists, shows versions and archives', async () => {
    const { ok, fails } = await cliAgainstServer();
    const dir = makeTempDir();
    const yamlFile = join(dir, 'fallback.yaml');
    writeFileSync(
      yamlFile,
      'strategy:\n  mode: fallback\ntargets:\n  - provider: "@openai-prod"\n  - provider: "@groq-backup"\n',
    );
    const jsonFile = join(dir, 'single.json');
    writeFileSync(jsonFile, JSON.stringify({ provider: '@openai-prod', request_timeout: 30000 }));

    const created = await ok(['configs', 'create', '--name', 'Prod', '--slug', 'prod', '-f', yamlFile]);
    expect(created).toMatchObject({ slug: 'prod', object: 'config' });
    await ok(['configs', 'update', 'prod', '-f', jsonFile]);
    const shown = await ok(['configs', 'get', 'prod']);
    expect(shown).toMatchObject({ version: 2, config: { provider: '@openai-prod', request_timeout: 30000 } });
    const versions = await ok(['configs', 'versions', 'prod']);
    expect(versions.total).toBe(2);
    expect((await ok(['configs', 'versions', 'prod', '1'])).config.strategy.mode).toBe('fallback');
    expect((await ok(['configs', 'list'])).data.map((c: { slug: string }) => c.slug)).toEqual(['prod']);
    await ok(['configs', 'archive', 'prod', '--yes']);
    expect((await ok(['configs', 'list'])).total).toBe(0);

    // A config the server refuses: exit 1 with the AB01 message; a missing file: usage error, exit 2.
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ strategy: { mode: 'fallback' } }));
    await fails(['configs', 'create', '--name', 'Bad', '-f', bad], 1, /config\.targets/);
    await fails(['configs', 'create', '--name', 'Missing', '-f', join(dir, 'nope.yaml')], 2, /cannot read/);
  });
});
