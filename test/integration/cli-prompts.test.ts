import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { cliAgainstServer } from '../helpers/cli.js';
import { startMockOpenAI } from '../helpers/mock-openai-upstream.js';
import { makeTempDir } from '../helpers/start-test-server.js';

const FILE = `
workspaces:
  - { slug: team-a, name: Team A }
prompt_labels:
  - { name: canary, description: early adopters }
  - { name: team-a-review, workspace: team-a }
prompt_collections:
  - { slug: support, name: Support, workspace: team-a }
  - { slug: billing, name: Billing, workspace: team-a, parent: support }
prompt_partials:
  - { slug: tone, name: Tone, workspace: team-a, string: "Be polite." }
prompts:
  - slug: reply
    name: Reply
    workspace: team-a
    collection: billing
    model: gpt-4o-mini
    parameters: { temperature: 0.2 }
    messages:
      - { role: system, content: "{{>tone}}" }
      - { role: user, content: "{{question}}" }
`;

describe('svcgw prompts and apply', () => {
  it('creates, lists, updates, renders and reads prompts from the CLI', { timeout: 120_000 }, async () => {
    const { ok, cli, fails } = await cliAgainstServer();
    const dir = makeTempDir();
    const template = join(dir, 'reply.yaml');
    writeFileSync(template, '- { role: user, content: "Answer {{question}}" }\n');
    const created = await ok([
      'prompts',
      'create',
      '--name',
      'Reply',
      '--slug',
      'reply',
      '-f',
      template,
      '--model',
      'gpt-4o-mini',
    ]);
    expect(created).toMatchObject({ slug: 'reply' });
    const listed = await cli(['prompts', 'list']);
    expect(listed.stdout).toMatch(/reply\s+Reply\s+gpt-4o-mini/);

    const rendered = await ok(['prompts', 'render', 'reply', '--var', 'question=Why?', '--set', 'max_tokens=5']);
    expect(rendered).toEqual({
      success: true,
      data: { model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'Answer Why?' }] },
    });
    await fails(['prompts', 'render', 'reply'], 1, /Missing variable: question/);

    await ok(['prompts', 'update', 'reply', '--parameters', '{"temperature":0.5}', '--publish']);
    const got = await ok(['prompts', 'get', 'reply']);
    expect(got).toMatchObject({ prompt_version: 2, parameters: { temperature: 0.5 }, model: 'gpt-4o-mini' });
    expect(got.string).toBe(JSON.stringify([{ role: 'user', content: 'Answer {{question}}' }]));
    expect((await ok(['prompts', 'get', 'reply@1'])).parameters).toBeNull();
    expect((await ok(['prompts', 'versions', 'reply'])).total).toBe(2);
  });

  it('runs a prompt and prints the answer', { timeout: 120_000 }, async () => {
    const { ok, cli, api } = await cliAgainstServer();
    const mock = await startMockOpenAI();
    onTestFinished(() => mock.close());
    const integration = await api.post('/v1/integrations', {
      name: 'Mock',
      slug: 'mock',
      ai_provider_id: 'openai',
      key: 'sk-mock',
      configurations: { custom_host: mock.baseUrl },
    });
    expect(integration.status).toBe(200);
    const dir = makeTempDir();
    const template = join(dir, 'ask.txt');
    writeFileSync(template, 'Say {{word}}');
    await ok([
      'prompts',
      'create',
      '--name',
      'Ask',
      '--slug',
      'ask',
      '-f',
      template,
      '--model',
      'gpt-4o-mini',
      '--virtual-key',
      '@mock',
    ]);
    const res = await cli(['prompts', 'run', 'ask', '--var', 'word=hello', '--set', 'max_tokens=7']);
    expect(res.code, res.stderr).toBe(0);
    const sent = mock.requests[0]!.json as any;
    expect(sent).toMatchObject({
      model: 'gpt-4o-mini',
      max_tokens: 7,
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    const answer = (await ok(['prompts', 'run', 'ask', '--var', 'word=hello'])).choices[0].message.content;
    expect(res.stdout.trim()).toBe(answer.trim());
    expect(answer.length).toBeGreaterThan(0);
  });

  it(
    'apply: labels, collections, partials and prompts, idempotent; a changed template is a new default version',
    {
      timeout: 120_000,
    },
    async () => {
      const { ok, cli, api } = await cliAgainstServer();
      const dir = makeTempDir();
      const path = join(dir, 'svcgw.yaml');
      writeFileSync(path, FILE);

      const dry = await ok(['apply', '-f', path, '--dry-run']);
      expect(dry.steps.map((s: any) => `${s.action} ${s.kind} ${s.name}`)).toEqual([
        'create workspace team-a',
        'create prompt_label canary',
        'create prompt_label team-a/team-a-review',
        'create prompt_collection support',
        'create prompt_collection billing',
        'create prompt_partial tone',
        'create prompt reply',
      ]);
      expect(await ok(['apply', '-f', path])).toMatchObject({ changed: true, summary: { create: 7 } });

      const reply = (await api.get('/v1/prompts/reply')).body;
      const billing = (await api.get('/v1/collections/billing')).body;
      expect(reply).toMatchObject({ collection_id: billing.id, prompt_version: 1, parameters: { temperature: 0.2 } });
      expect(billing.parent_collection_id).toBe((await api.get('/v1/collections/support')).body.id);
      const rendered = await api.post('/v1/prompts/reply/render', { variables: { question: 'Hi?' } });
      expect(rendered.body.data.messages).toEqual([
        { role: 'system', content: 'Be polite.' },
        { role: 'user', content: 'Hi?' },
      ]);

      const again = await cli(['apply', '-f', path]);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout, again.stdout).toMatch(/No changes: the server already matches .*\(7 unchanged\)/);

      // A changed template and partial: new versions, made the default ones.
      writeFileSync(path, FILE.replace('Be polite.', 'Be brief.').replace('temperature: 0.2', 'temperature: 0.7'));
      const applied = await ok(['apply', '-f', path]);
      expect(applied).toMatchObject({ summary: { update: 2 } });
      expect((await api.get('/v1/prompts/reply')).body).toMatchObject({
        prompt_version: 2,
        parameters: { temperature: 0.7 },
      });
      expect((await api.get('/v1/prompts/partials/tone')).body).toMatchObject({ version: 2, string: 'Be brief.' });
      expect((await ok(['apply', '-f', path])).changed).toBe(false);
    },
  );
});
